"""Write what :func:`realgap.envs.identify.fit.identify` found: the identified spec, a DR profile, a fit plot.

- ``<out>.yaml`` (format ``realgap.identified_actuators/1``): the log it came from, the delay, and per joint each
  parameter as ``{value, std, unit, method}`` or ``{identifiable: false, reason}``, next to the datasheet value;
- ``<out>_dr.yaml``: a DR profile (:func:`realgap.envs.dr.profile.load_dr_profile` reads it) built from a base
  profile, with the identified joints' friction, kp/kd scales and torque-limit scale centred on the identified values
  and ± ``k_sigma`` standard deviations wide (at least ± ``floor`` of the value: a simulated log's σ is ~0, and a
  zero-width range trains for one robot only); the delay range is the identified delay (exact), or the range of the
  joints' delays where each joint has its own. Armature cannot be
  expressed: the profile format has no armature field (listed under ``not_in_dr_profile`` in the spec);
- ``<out>.png``: per joint, logged vs replayed ``q`` and logged vs predicted ``τ``, and their residuals.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from realgap.envs.deploy.log import RobotLog
from realgap.envs.dr.profile import load_dr_profile, parse_dr_profile
from realgap.envs.identify.fit import Estimate, Identification
from realgap.envs.run.paths import check_output_file

FORMAT = "realgap.identified_actuators/1"


def _estimate_dict(e: Estimate) -> dict[str, Any]:
    if not e.identifiable:
        return {"identifiable": False, "unit": e.unit, "reason": e.reason}
    return {"value": float(e.value), "std": float(e.std), "unit": e.unit, "method": e.method}


def _datasheet(log: RobotLog) -> dict[str, dict[str, float]]:
    meta = log.metadata()
    out = {}
    for g in meta.actuator_groups:
        for k, j in enumerate(g.joint_names):
            out[j] = {
                "kp": g.kp[k],
                "kd": g.kd[k],
                "armature": g.armature[k],
                "coulomb": g.coulomb_friction[k],
                "viscous": g.viscous_friction[k],
                "torque_limit": g.peak_torque[k],
            }
    return out


def spec_dict(ident: Identification, log: RobotLog, log_path: str, dr_path: str | None) -> dict[str, Any]:
    """The identified actuator spec as YAML-ready data."""
    sheet = _datasheet(log)
    joints = {}
    for f in ident.joints:
        joints[f.joint] = {
            name: _estimate_dict(e) | ({"datasheet": float(sheet[f.joint][name])} if name in sheet[f.joint] else {})
            for name, e in f.estimates.items()
        }
    delay = _estimate_dict(ident.delay_steps)
    if ident.delay_steps.identifiable:
        delay["value_s"] = ident.delay_steps.value * ident.dt
    return {
        "format": FORMAT,
        "log": {
            "path": log_path,
            "metadata_sha256": log.metadata_sha256,
            "source": log.source,
            "samples": log.num_samples,
            "control_dt_s": log.control_dt,
            "tau_source": log.tau_source,
            "fixed_base": log.fixed_base,
        },
        "command_delay_steps": delay,
        "joints": joints,
        "dr_profile": dr_path,
        "not_in_dr_profile": [
            "armature (the DR profile format has no armature field; use the identified value as "
            "the simulator's joint armature)"
        ],
        "notes": list(ident.notes),
    }


def _range(value: float, std: float, k_sigma: float, floor: float, lo_bound: float = 0.0) -> list[float]:
    half = max(k_sigma * std, floor * abs(value))
    return [float(max(lo_bound, value - half)), float(value + half)]


def _rest(group: dict[str, Any], identified: str, joint_names: tuple[str, ...]) -> dict[str, Any] | None:
    """``group`` restricted to the joints not identified, or None when none of ``joint_names`` is left in it."""
    patterns = [f"(?=(?:{p})$)(?!(?:{identified})$).*" for p in group["joints"]]
    kept = [p for p in patterns if any(re.fullmatch(p, name) for name in joint_names)]
    return group | {"joints": kept} if kept else None


def dr_profile_dict(
    ident: Identification, log: RobotLog, name: str, base: str = "nominal", *, k_sigma: float = 3.0, floor: float = 0.05
) -> dict[str, Any]:
    """A DR profile: ``base`` with the identified joints' friction, gains, torque limit and the delay replaced."""
    data = load_dr_profile(base).to_dict()
    data["name"] = name
    data["description"] = (
        f"Centred on the actuator parameters identified from log {log.metadata_sha256[:12]} "
        f"(± {k_sigma:g} σ, at least ± {floor:.0%}); everything else from '{base}'."
    )
    ok = {f.joint: f for f in ident.joints}
    pattern = "|".join(re.escape(j) for j in ok)
    # the base ranges keep applying to the joints not identified (a lookahead excludes the identified ones); a base
    # pattern left matching none of the robot's joints (all of them identified) is dropped, as the loader refuses it
    friction = [g for g in (_rest(group, pattern, log.joint_names) for group in data["joint_friction"]) if g]
    actuator = [g for g in (_rest(group, pattern, log.joint_names) for group in data["actuator"]) if g]
    for joint, f in ok.items():
        e, j = f.estimates, f.index
        fr: dict[str, Any] = {"asset": "robot", "joints": [re.escape(joint)]}
        if e["coulomb"].identifiable:
            fr["coulomb_nm"] = _range(e["coulomb"].value, e["coulomb"].std, k_sigma, floor)
        if e["viscous"].identifiable:
            fr["viscous_nms_per_rad"] = _range(e["viscous"].value, e["viscous"].std, k_sigma, floor)
        if len(fr) > 2:
            friction.append(fr)
        act: dict[str, Any] = {"asset": "robot", "joints": [re.escape(joint)]}
        for key, cmd in (("kp", log.kp[j]), ("kd", log.kd[j])):
            if e[key].identifiable and cmd > 0:
                act[f"{key}_scale"] = _range(e[key].value / cmd, e[key].std / cmd, k_sigma, floor, 1e-6)
        sheet = _datasheet(log)[joint]["torque_limit"]
        if e["torque_limit"].identifiable:
            act["torque_limit_scale"] = _range(
                e["torque_limit"].value / sheet, e["torque_limit"].std / sheet, k_sigma, floor, 1e-6
            )
        if len(act) > 2:
            actuator.append(act)
    data["joint_friction"], data["actuator"] = friction, actuator
    if delays := ident.joint_delays():  # one per joint: training's chain draws one per bus, over their range
        data["command_delay_s"] = [min(delays.values()) * ident.dt, max(delays.values()) * ident.dt]
    elif ident.delay_steps.identifiable:
        d = ident.delay_steps.value * ident.dt
        data["command_delay_s"] = [float(d), float(d)]
    parse_dr_profile(data, f"{name} (generated)")  # refuse to write what load_dr_profile would refuse
    return data


def write_outputs(
    ident: Identification,
    log: RobotLog,
    log_path: str,
    out: str | Path,
    *,
    base_profile: str = "nominal",
    plot: bool = True,
) -> dict[str, Path]:
    """Write the spec YAML, the DR profile and the plot next to each other; returns their paths.

    Raises:
        PathRefused: One of the three paths is a folder or a symbolic link, or ``out`` is not a ``.yaml`` path
            (:func:`output_paths`; checked before any is written).
    """
    out, dr_path, plot_path = output_paths(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = out.with_suffix("")
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem.name + "_dr")
    dr = dr_profile_dict(ident, log, name, base_profile)
    header = "# Generated by scripts/identify.py; see realgap/envs/identify/report.py\n"
    dr_path.write_text(header + yaml.safe_dump(dr, sort_keys=False, allow_unicode=True), encoding="utf-8")
    spec = spec_dict(ident, log, str(log_path), str(dr_path))
    out.write_text(header + yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    paths = {"spec": out, "dr_profile": dr_path}
    if plot:
        paths["plot"] = plot_fit(ident, log, plot_path)
    return paths


def output_paths(out: str | Path) -> tuple[Path, Path, Path]:
    """The spec, DR profile and plot paths of ``--out`` (``<out>``, ``<out stem>_dr.yaml``, ``<out stem>.png``), each
    checked as a file to create (:func:`realgap.envs.run.paths.check_output_file`), so a refused path leaves none
    written.

    Raises:
        PathRefused: Names the flag, the path and the rule it breaks.
    """

    out = check_output_file(out, "--out", (".yaml", ".yml"))
    stem = out.with_suffix("")
    return out, check_output_file(f"{stem}_dr.yaml", "--out"), check_output_file(f"{stem}.png", "--out")


def plot_fit(ident: Identification, log: RobotLog, path: Path) -> Path:
    """Logged vs replayed ``q`` and logged vs predicted ``τ`` per joint, with residuals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(ident.joints)
    fig, axes = plt.subplots(n, 2, figsize=(13, 3.2 * n), squeeze=False)
    for row, f in enumerate(ident.joints):
        s, j, t = f.samples, f.index, log.t[f.samples]
        ax = axes[row, 0]
        ax.plot(t, log.q_target[s, j], color="0.7", lw=0.8, label="target q*")
        ax.plot(t, log.q[s, j], lw=1.2, label="logged q")
        if f.q_replayed is not None:
            ax.plot(t, f.q_replayed[s], "--", lw=1.0, label="replayed q (identified)")
            r = ax.twinx()
            r.plot(t, (f.q_replayed[s] - log.q[s, j]) * 1e3, color="tab:red", lw=0.6, alpha=0.6)
            r.set_ylabel("residual, mrad", color="tab:red")
        ax.set_title(f"{f.joint}: position")
        ax.set_ylabel("rad")
        ax.legend(fontsize=7, loc="upper left")
        ax = axes[row, 1]
        if log.tau is not None and f.tau_predicted is not None:
            ax.plot(t, log.tau[s, j], lw=1.2, label="logged τ")
            ax.plot(t, f.tau_predicted[s], "--", lw=1.0, label="PD law (identified)")
            r = ax.twinx()
            r.plot(t, f.tau_predicted[s] - log.tau[s, j], color="tab:red", lw=0.6, alpha=0.6)
            r.set_ylabel("residual, N·m", color="tab:red")
            ax.legend(fontsize=7, loc="upper left")
        else:
            ax.text(0.5, 0.5, "no torque logged", ha="center", transform=ax.transAxes)
        ax.set_title(f"{f.joint}: torque")
        ax.set_ylabel("N·m")
    for ax in axes[-1]:
        ax.set_xlabel("time, s")
    delay = ident.delay_steps
    fig.suptitle(
        f"identified delay {'n/a' if delay.value is None else int(delay.value)} steps "
        f"({'' if delay.value is None else f'{delay.value * ident.dt * 1e3:.3g} ms'})"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def summary_lines(ident: Identification) -> list[str]:
    """One line per joint and parameter, for the console."""
    d = ident.delay_steps
    lines = [
        f"command delay: {d.reason}"
        if d.value is None
        else f"command delay: {int(d.value)} steps ({d.value * ident.dt * 1e3:.3g} ms; {d.method})"
    ]
    for f in ident.joints:
        for name, e in f.estimates.items():
            text = (
                f"not identifiable: {e.reason}"
                if not e.identifiable
                else f"{e.value:.5g} ± {e.std:.2g} {e.unit}" + ("" if math.isfinite(e.std) else "")
            )
            lines.append(f"  {f.joint:28s} {name:13s} {text}")
    return lines + [f"note: {n}" for n in ident.notes]
