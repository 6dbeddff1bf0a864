"""SRBD against the full model: the shipped balance policy runs the MuJoCo G1 (the deploy runtime, the same pushes as
its evaluation), and every physics step the single body is given the simulator's measured contact forces.

What is compared, per step (full model = MuJoCo's subtree quantities of the root, by finite differences of
``mj_subtreeVel`` over the step):

- CoM acceleration: SRBD ``Σf/M + g`` against the full model's. Newton's law holds for any multibody, so what remains
  is what MuJoCo adds outside rigid-body mechanics (joint armature, a rotor inertia acting in joint space only) plus
  the finite difference.
- Angular-momentum rate about the CoM: SRBD ``Σ (r_i − c) × f_i`` against the full model's; likewise exact in
  principle.
- Where SRBD really breaks: it maps momentum to motion through one inertia, ``ω = I_c⁻¹ L``. The share of the
  angular momentum that the pelvis's rotation does not explain, ``‖L − I_c ω_pelvis‖ / ‖L‖``, is the limbs' own.
- Short-horizon CoM prediction: from the measured state, SRBD integrated over ``horizon_s`` with the measured forces
  against where the full model's CoM went. Like the two rates, this tests Newton's law and the bookkeeping (forces,
  points, mass, CoM), not SRBD's approximation.
- The approximation itself, over the same horizon and forces: SRBD rotates the body as one rigid inertia (frozen at
  the horizon's start, ``ω = I⁻¹ L``), and a planner reads that rotation as the base's. Its predicted rotation
  against the pelvis's actual one (angle of ``R_srbdᵀ R_pelvis``, both relative to the start), beside the rotation
  to be predicted and the error of holding the pelvis's start angular velocity instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.deploy import DeployRuntime
from realgap.envs.format import load_policy
from realgap.envs.format.protocol import BALANCE_PROTOCOL
from realgap.envs.robots.g1 import G1_ROOT_BODY
from realgap.envs.srbd.dynamics import GRAVITY_W, BodyState, so3_exp, step
from realgap.envs.srbd.inertia import composite
from realgap.envs.srbd.model import bodies_w

RAMP_END_S = 1.25
"""Prediction starts before this time (s) fall in the export's 1 s ramp into its crouch (and the spawn's settling),
where the limbs move on their own; the rotation figures are summarised separately for them ("ramp") and after."""


@dataclass(frozen=True)
class Trace:
    """Per physics step of one episode (``T`` steps).

    Attributes:
        t: Time, s. acc_full, acc_srbd: CoM acceleration, m/s² ``(T, 3)``. ldot_full, ldot_srbd: angular-momentum
        rate about the CoM, N·m ``(T, 3)``. limb_share: ``‖L − I_c ω_pelvis‖ / ‖L‖`` (NaN when ‖L‖ < 0.05 kg·m²/s).
        normal_force: total vertical contact force, N. root_height: pelvis height, m. horizon_err: short-horizon
        CoM prediction error, m (``(K,)``, one per prediction start). rot_err: the angle between SRBD's predicted
        rotation over the horizon and the pelvis's, rad ``(K,)``. rot_motion: the pelvis's rotation over the horizon,
        rad ``(K,)``. rot_err_hold: the error of holding the pelvis's start angular velocity instead, rad ``(K,)``.
        horizon_t: each prediction's start time, s ``(K,)``.
    """

    t: np.ndarray
    acc_full: np.ndarray
    acc_srbd: np.ndarray
    ldot_full: np.ndarray
    ldot_srbd: np.ndarray
    limb_share: np.ndarray
    normal_force: np.ndarray
    root_height: np.ndarray
    horizon_err: np.ndarray
    rot_err: np.ndarray
    rot_motion: np.ndarray
    rot_err_hold: np.ndarray
    horizon_t: np.ndarray


def rotation_angle(rot: np.ndarray) -> float:
    """Angle (rad, in [0, π]) of a rotation matrix, accurate at small angles (atan2 of its axis part and trace)."""
    r = np.asarray(rot, dtype=float)
    axis = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    return float(np.arctan2(0.5 * np.linalg.norm(axis), 0.5 * (np.trace(r) - 1.0)))


def contact_forces_w(model, data, robot_body_ids: set[int]) -> tuple[np.ndarray, np.ndarray]:
    """Every contact's force on the robot (N, world) and its point (m): ``(C, 3)`` each."""
    import mujoco

    forces, points, f6 = [], [], np.zeros(6)
    for i in range(data.ncon):
        c = data.contact[i]
        mujoco.mj_contactForce(model, data, i, f6)
        f_w = c.frame.reshape(3, 3).T @ f6[:3]  # force of geom1 on geom2, in the world
        b1, b2 = model.geom_bodyid[c.geom1], model.geom_bodyid[c.geom2]
        if (b2 in robot_body_ids) == (b1 in robot_body_ids):
            continue  # self-contact (none here) or no robot part: no external force on the robot
        forces.append(f_w if b2 in robot_body_ids else -f_w)
        points.append(c.pos.copy())
    return np.array(forces).reshape(-1, 3), np.array(points).reshape(-1, 3)


def _momenta(model, data, root: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import mujoco

    mujoco.mj_subtreeVel(model, data)
    return data.subtree_com[root].copy(), data.subtree_linvel[root].copy(), data.subtree_angmom[root].copy()


def run_episode(
    policy_dir: str | Path,
    duration_s: float = 6.0,
    pushes: tuple[tuple[float, float, float], ...] = (),
    horizon_s: float = 0.2,
    seed: int = 0,
) -> Trace:
    """The export at ``policy_dir`` balancing the MuJoCo G1 for ``duration_s``; ``pushes``: (time s, dvx, dvy) m/s."""
    import mujoco

    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    meta, policy = load_policy(policy_dir)
    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    model, data = robot.model, robot.data
    root = model.body(G1_ROOT_BODY).id
    robot_ids = {b for b in range(model.nbody) if b != 0 and model.body_rootid[b] == root}
    dt = model.opt.timestep
    rows: dict[str, list] = {k: [] for k in ("t", "af", "as", "lf", "ls", "share", "fz", "h")}
    starts, horizon = [], max(1, round(horizon_s / dt))
    pending = sorted(pushes)
    steps = round(duration_s / dt)
    states: list[tuple] = []
    for k in range(steps):
        kick = np.zeros(3)
        if k % runtime.steps_per_policy == 0:
            while pending and pending[0][0] <= data.time:
                dv = pending.pop(0)[1:]
                robot.push(dv)
                kick[:2] += dv  # the whole tree's velocity changes by dv (not a contact force): the single body's too
                mujoco.mj_forward(model, data)
            runtime.act()
        c0, v0, l0 = _momenta(model, data, root)
        body = composite(*bodies_w(model, data))
        omega_pelvis = data.cvel[root, :3].copy()  # rotational part of the root's spatial velocity, world
        rot0 = data.xmat[root].reshape(3, 3).copy()
        runtime.control()  # one physics step: contacts and forces of the state the step started from
        forces, points = contact_forces_w(model, data, robot_ids)
        mujoco.mj_forward(model, data)  # kinematics of the new state (mj_step leaves those of the old one)
        c1, v1, l1 = _momenta(model, data, root)
        state = BodyState(c0, v0, np.eye(3), l0)
        rows["t"].append(data.time)
        rows["af"].append((v1 - v0) / dt)
        rows["as"].append(forces.sum(axis=0) / body.mass + GRAVITY_W)
        rows["lf"].append((l1 - l0) / dt)
        rows["ls"].append(np.cross(points - c0, forces).sum(axis=0) if len(forces) else np.zeros(3))
        norm = np.linalg.norm(l0)
        rows["share"].append(np.linalg.norm(l0 - body.inertia_w @ omega_pelvis) / norm if norm > 0.05 else np.nan)
        rows["fz"].append(forces[:, 2].sum() if len(forces) else 0.0)
        rows["h"].append(robot.root_height())
        states.append((state, body, forces, points, c1, kick, rot0, data.xmat[root].reshape(3, 3).copy(), omega_pelvis))
        if k % round(0.25 / dt) == 0:
            starts.append(k)
    errs: dict[str, list[float]] = {"com": [], "rot": [], "motion": [], "hold": [], "t": []}
    for k in starts:
        if k + horizon > len(states):
            break
        # the single body starts with the full model's CoM state and L; its frame is the world's at k (R = 1), so
        # body.inertia_w is its body-frame inertia and s.R its rotation relative to the start
        s, body = states[k][0], states[k][1]
        for j in range(k, k + horizon):  # the measured forces of each step (and any push), applied to the single body
            if j > k and states[j][5].any():
                s = BodyState(s.p, s.v + states[j][5], s.R, s.L)
            s = step(s, body.mass, body.inertia_w, states[j][2], states[j][3], dt)
        end = states[k + horizon - 1]
        rel = end[7] @ states[k][6].T  # the pelvis's rotation over the horizon, world frame
        errs["t"].append(k * dt)
        errs["com"].append(float(np.linalg.norm(s.p - end[4])))
        errs["rot"].append(rotation_angle(s.R.T @ rel))
        errs["motion"].append(rotation_angle(rel))
        errs["hold"].append(rotation_angle(so3_exp(states[k][8] * horizon * dt).T @ rel))
    a = {k: np.array(v) for k, v in rows.items()}
    e = {k: np.array(v) for k, v in errs.items()}
    rates_ = (a["t"], a["af"], a["as"], a["lf"], a["ls"], a["share"], a["fz"], a["h"])
    return Trace(*rates_, e["com"], e["rot"], e["motion"], e["hold"], e["t"])


def summary(trace: Trace, mass: float) -> dict[str, Any]:
    """Medians and tails of the per-step comparison (units in the key names)."""
    acc = np.linalg.norm(trace.acc_full - trace.acc_srbd, axis=1)
    ldot = np.linalg.norm(trace.ldot_full - trace.ldot_srbd, axis=1)
    return {
        "steps": int(trace.t.size),
        "fell": bool(trace.root_height.min() < BALANCE_PROTOCOL.fall_height_m),  # the protocol's height test
        "root_height_min_m": float(trace.root_height.min()),
        "com_acc_full_p50_mps2": float(np.median(np.linalg.norm(trace.acc_full, axis=1))),
        "com_acc_error_p50_mps2": float(np.median(acc)),
        "com_acc_error_p99_mps2": float(np.percentile(acc, 99)),
        "ldot_full_p50_nm": float(np.median(np.linalg.norm(trace.ldot_full, axis=1))),
        "ldot_error_p50_nm": float(np.median(ldot)),
        "ldot_error_p99_nm": float(np.percentile(ldot, 99)),
        "limb_share_p50": float(np.nanmedian(trace.limb_share)),
        "limb_share_p90": float(np.nanpercentile(trace.limb_share, 90)),
        "normal_force_mean_over_weight": float(trace.normal_force.mean() / (mass * 9.81)),
        "com_prediction_error_max_m": float(trace.horizon_err.max()) if trace.horizon_err.size else float("nan"),
        "com_prediction_error_p50_m": float(np.median(trace.horizon_err)) if trace.horizon_err.size else float("nan"),
        **_rotation_summary(trace),
    }


def _rotation_summary(trace: Trace) -> dict[str, Any]:
    """SRBD's rotation prediction over the horizon (the approximation), in the ramp and after it (:data:`RAMP_END_S`):
    medians and maxima, rad, the median of error over the rotation to predict (starts rotating at least 1 mrad), and
    every start's figures."""
    if not trace.rot_err.size:
        return {}
    out: dict[str, Any] = {}
    for name, sel in (("ramp", trace.horizon_t < RAMP_END_S), ("after", trace.horizon_t >= RAMP_END_S)):
        if not sel.any():
            continue
        err, motion, hold = trace.rot_err[sel], trace.rot_motion[sel], trace.rot_err_hold[sel]
        moving = motion >= 1e-3
        out |= {
            f"rot_{name}_starts": int(sel.sum()),
            f"rot_{name}_error_p50_rad": float(np.median(err)),
            f"rot_{name}_error_max_rad": float(err.max()),
            f"rot_{name}_motion_p50_rad": float(np.median(motion)),
            f"rot_{name}_motion_max_rad": float(motion.max()),
            f"rot_{name}_hold_error_p50_rad": float(np.median(hold)),
            f"rot_{name}_error_over_motion_p50": float(np.median(err[moving] / motion[moving]))
            if moving.any()
            else float("nan"),
        }
    out["rot_per_start"] = {
        "t_s": trace.horizon_t.tolist(),
        "error_rad": trace.rot_err.tolist(),
        "motion_rad": trace.rot_motion.tolist(),
        "hold_error_rad": trace.rot_err_hold.tolist(),
    }
    return out


def plot(trace: Trace, path: Path, title: str) -> Path:
    """Angular-momentum rate (full vs SRBD, pitch axis) and the limbs' share of the momentum against time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    ax1.plot(trace.t, trace.ldot_full[:, 1], label="full model (MuJoCo)", linewidth=1)
    ax1.plot(trace.t, trace.ldot_srbd[:, 1], "--", label="SRBD: Σ (r − c) × f", linewidth=1)
    ax1.set_ylabel("dL_y/dt about the CoM [N·m]")
    ax1.legend(fontsize=8)
    ax2.plot(trace.t, trace.limb_share, linewidth=1)
    ax2.set_ylabel("‖L − I_c ω_pelvis‖ / ‖L‖")
    ax2.set_xlabel("time [s]")
    ax2.set_yscale("log")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
