"""Two exported balance policies on the hidden G1, free-floating, facing the same pushes: paired time up
(``scripts/hidden_compare.py``), callable without the command line.

:func:`check_request` refuses bad numbers before an export is read; :func:`hidden_compare` loads the exports (refusing
a pair that is not comparable), draws one hidden robot for every arm, replays every episode's push schedule for each
arm and writes the JSON; :func:`plot_standing` draws the fraction of episodes still standing against time.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from realgap.envs.deploy.episode import EpisodeResult, PairedTimeUp
    from realgap.envs.deploy.robot import Robot
    from realgap.envs.format.protocol import BalanceProtocol


@dataclass(frozen=True)
class HiddenCompareRequest:
    """A paired comparison as scripts/hidden_compare.py's flags give it (see its ``--help`` for each)."""

    policy: str
    against: str
    hidden_from: str | None = None
    hidden_seed: int = 0
    hidden_drives: str = "default"
    zero_action: bool = False
    episodes: int = 64
    seed: int = 0
    duration_s: float | None = None
    push_mps: str | tuple[float, float] | list[float] | None = None
    push_interval_s: str | tuple[float, float] | list[float] | None = None
    fall_height: float | None = None
    fall_tilt: float | None = None
    out: str | None = None
    plot: str | None = None


def check_request(req: HiddenCompareRequest) -> None:
    """Refuse counts and protocol flags no episode can run with.

    Raises:
        ValueError: episodes < 1; a protocol flag out of range (``--duration_s``, ``--push_mps``, ...: named by
            :func:`~realgap.envs.deploy.flags.protocol_from_flags`).
    """
    from realgap.envs.deploy.flags import protocol_from_flags
    from realgap.envs.format.protocol import BALANCE_PROTOCOL

    if req.episodes < 1:
        raise ValueError(f"--episodes must be >= 1, got {req.episodes}")
    protocol_from_flags(req, BALANCE_PROTOCOL, req.duration_s)


def _print_now(line: str) -> None:
    print(line, flush=True)


def _run_arms(
    arms: dict[str, tuple[str, Any, Any]],
    req: HiddenCompareRequest,
    protocol: BalanceProtocol,
    make_robot: Callable[[], Robot],
    echo: Callable[[str], None],
) -> tuple[dict[str, list[EpisodeResult]], dict[str, float]]:
    """Every arm's episodes on the same robot and push schedules (the seed), ``echo`` one summary line per arm.

    Returns:
        Each arm's episode results and its wall time over all its episodes, s.
    """
    from realgap.envs.deploy.episode import survival

    results, wall = {}, {}
    for name, (path, meta, policy) in arms.items():
        t0 = time.perf_counter()
        results[name] = survival(
            meta, policy, episodes=req.episodes, protocol=protocol, seed=req.seed, make_robot=make_robot
        )
        wall[name] = time.perf_counter() - t0
        falls = sum(r.fell for r in results[name])
        mean = sum(r.time_up_s for r in results[name]) / req.episodes
        echo(
            f"{name:>8} {path}: mean time up {mean:.2f} s, falls {falls}/{req.episodes} "
            f"({wall[name] / req.episodes:.1f} s per episode)"
        )
    return results, wall


def _pair_arms(results: dict[str, list[EpisodeResult]], echo: Callable[[str], None]) -> dict[str, PairedTimeUp]:
    """The paired time up of each pair of arms that ran (``policy - against``, then each against ``zero``), each
    ``echo``-ed."""
    from realgap.envs.deploy.episode import paired_time_up

    pairs = [(a, b) for a, b in (("policy", "against"), ("policy", "zero"), ("against", "zero")) if b in results]
    paired = {f"{a} - {b}": paired_time_up(results[a], results[b]) for a, b in pairs}
    for key, p in paired.items():
        echo(
            f"[realgap] paired time up, {key}: {p.diff_mean_s:+.3f} ± {p.diff_se_s:.3f} s (mean ± standard error, "
            f"{p.episodes} episodes; falls {p.falls_a} vs {p.falls_b})"
        )
    return paired


def hidden_compare(req: HiddenCompareRequest, echo: Callable[[str], None] = _print_now) -> tuple[dict[str, Any], Path]:
    """Run every arm on the same hidden robot and push schedules, ``echo`` each arm's summary and each paired
    difference, write the report (and the plot when ``req.plot`` is set). Returns the report and its path.

    Raises:
        ValueError: See :func:`check_request`; exports of different tasks or robots; an unknown drive family.
        MetadataError: An export that cannot be read.
    """
    check_request(req)
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.episode import check_comparable, schedules, stance_metadata
    from realgap.envs.deploy.flags import protocol_from_flags
    from realgap.envs.deploy.hidden_robot import HiddenRobot, draw_truth
    from realgap.envs.eval.robustness.sweep import finite_or_none
    from realgap.envs.format import load_metadata, load_policy

    arms = {"policy": (req.policy, *load_policy(req.policy)), "against": (req.against, *load_policy(req.against))}
    hidden_from = req.hidden_from or req.against
    truth_meta = load_metadata(req.hidden_from) if req.hidden_from else arms["against"][1]
    check_comparable({f"--{k} {v[0]}": v[1] for k, v in arms.items()} | {f"--hidden_from {hidden_from}": truth_meta})
    if req.zero_action:
        # the task's zero action: hold the stance (not the nominal pose of an export trained around another one)
        arms["zero"] = ("zero action", stance_metadata(truth_meta), ZeroPolicy(truth_meta.action_dim))
    # one robot for every arm: the same drives, rebuilt per arm
    truth = draw_truth(truth_meta, req.hidden_seed, req.hidden_drives)
    make_robot = functools.partial(HiddenRobot, truth_meta, fixed_base=False, truth=truth)
    protocol = protocol_from_flags(req, truth_meta.balance_protocol, req.duration_s)  # the export's, as overridden
    (lo, hi), (ilo, ihi) = protocol.push_mps, protocol.push_interval_s
    echo(
        f"[realgap] hidden G1, {req.hidden_drives} drives, seed {req.hidden_seed} (drawn around {hidden_from}; "
        f"command delay {truth.delay_steps} steps), free base; {req.episodes} episodes of {protocol.episode_s:g} s, "
        f"pushes {lo:g}-{hi:g} m/s every {ilo:g}-{ihi:g} s, seed {req.seed}"
    )
    settings = {"episodes": req.episodes, "seed": req.seed, "protocol": protocol.to_dict()}
    results, wall = _run_arms(arms, req, protocol, make_robot, echo)
    paired = _pair_arms(results, echo)
    plan = schedules(req.episodes, protocol, req.seed)
    report = {
        "hidden_robot": {
            "seed": req.hidden_seed,
            "drives": req.hidden_drives,
            "drawn_from": hidden_from,
            "fixed_base": False,
            "truth": truth.to_dict(),
        },
        "settings": settings,
        "exports": {k: v[0] for k, v in arms.items()},
        "wall_s_per_episode": {k: v / req.episodes for k, v in wall.items()},
        "paired": {k: dataclasses.asdict(v) for k, v in paired.items()},
        "per_episode": [
            {"pushes": [dataclasses.asdict(p) for p in s]} | {k: dataclasses.asdict(results[k][e]) for k in results}
            for e, s in enumerate(plan)
        ],
    }
    stamp = f"seed{req.hidden_seed}_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}.json"
    out = Path(req.out) if req.out else Path("runs") / "hidden_compare" / stamp
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(finite_or_none(report), indent=2))
    echo(f"[realgap] wrote {out}")
    if req.plot:
        labels = {k: f"{k}: {v[0]}" for k, v in arms.items()}
        title = f"hidden G1, {req.hidden_drives} drives, seed {req.hidden_seed}: {req.episodes} paired episodes"
        plot_standing(results, labels, req.duration_s, Path(req.plot), title)
        echo(f"[realgap] wrote {req.plot}")
    return report, out


def plot_standing(results: dict, labels: dict[str, str], duration_s: float, path: Path, title: str) -> None:
    """Fraction of each arm's episodes still standing at each time (1 at t = 0; a drop at each fall)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    t = np.linspace(0.0, duration_s, 401)
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, episodes in results.items():
        falls = np.array([r.time_up_s for r in episodes if r.fell])
        standing = 1.0 - (falls[None, :] <= t[:, None]).sum(axis=1) / len(episodes)
        ax.step(t, standing, where="post", label=labels[name])
    ax.set(xlabel="time, s", ylabel="fraction of episodes standing", ylim=(0, 1.02), title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
