"""Two exported balance policies on the hidden G1, free-floating, facing the same pushes: paired time up.

    python scripts/hidden_compare.py --policy runs/balance_g1/<identified>/exported \\
        --against configs/policies/balance_g1 --hidden_seed 3 --episodes 64 --seed 0 --out runs/hidden/seed3.json

The robot is ``--robot hidden`` of ``python -m realgap.envs.deploy`` (``envs/sim2sim/hidden_robot.py``): the MuJoCo
G1 whose drive parameters (delay, realized gains, friction, armature, torque limit) are drawn from ``--hidden_seed``
around the datasheet of the ``--against`` export (or ``--hidden_from``), with a free base in the start pose. Every
episode's push schedule (the balance task's: 0.2-0.4 m/s every 3-5 s, drawn from ``--seed``) is replayed for each
policy; an episode ends at ``--duration_s`` or at the task's fall (root below 0.45 m or tilted beyond 1 rad).
Prints each policy's mean time up and falls, and the paired difference (policy minus against) of time up with its
standard error; ``--zero_action`` adds the zero action (hold the stance) as a third arm. Writes one JSON (``--out``,
default runs/hidden_compare/seed<N>_<timestamp>.json): the settings, the hidden truth, the summaries, every episode
with its pushes. Bad input exits with status 2 and one message.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import time
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import nonnegative_float, nonnegative_int, parser, positive_float, shared_flags

    p = parser(__doc__, shared_flags("episodes", "seed", episodes=64))
    p.add_argument("--policy", required=True, help="export folder (or policy.onnx) of the policy to test")
    p.add_argument("--against", required=True, help="export folder (or policy.onnx) it is compared with")
    p.add_argument("--hidden_from", default=None, help="export whose datasheet the hidden truth is drawn around "
                   "(default: --against)")  # fmt: skip
    p.add_argument("--hidden_seed", type=nonnegative_int, default=0, help="seed of the hidden drive parameters")
    p.add_argument("--hidden_drives", default="default", help="family the hidden drives are drawn from "
                   "(default, worn: envs/sim2sim/hidden_robot.py DRIVE_FAMILIES)")  # fmt: skip
    p.add_argument("--zero_action", action="store_true", help="also run the zero action (hold the stance)")
    p.add_argument("--duration_s", type=positive_float, default=10.0, help="episode length, s (the task's: 10)")
    p.add_argument(
        "--push_mps", type=nonnegative_float, nargs=2, default=(0.2, 0.4), metavar=("LO", "HI"), help="push, m/s"
    )
    p.add_argument("--push_interval_s", type=positive_float, nargs=2, default=(3.0, 5.0), metavar=("LO", "HI"),
                   help="time between pushes, s")  # fmt: skip
    p.add_argument("--fall_height", type=positive_float, default=0.45, help="fall: root below this height, m")
    p.add_argument("--fall_tilt", type=positive_float, default=1.0, help="fall: root tilted beyond this angle, rad")
    p.add_argument("--out", default=None, help="output JSON (default: runs/hidden_compare/seed<N>_<timestamp>.json)")
    p.add_argument("--plot", default=None, help="also draw the fraction of episodes still standing against time (PNG)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    (lo, hi), (ilo, ihi) = args.push_mps, args.push_interval_s
    if args.episodes < 1 or not args.duration_s > 0 or not 0 <= lo <= hi or not 0 < ilo <= ihi:
        raise ValueError("--episodes must be >= 1, --duration_s > 0, --push_mps 0 <= LO <= HI, "
                         "--push_interval_s 0 < LO <= HI")  # fmt: skip
    from realgap.envs.deploy import ZeroPolicy, load_metadata, load_policy
    from realgap.envs.deploy.sim2sim import check_comparable, paired_time_up, schedules, stance_metadata, survival
    from realgap.envs.eval.sweep import finite_or_none
    from realgap.envs.sim2sim.hidden_robot import HiddenRobot, draw_truth

    arms = {"policy": (args.policy, *load_policy(args.policy)), "against": (args.against, *load_policy(args.against))}
    hidden_from = args.hidden_from or args.against
    truth_meta = load_metadata(args.hidden_from) if args.hidden_from else arms["against"][1]
    check_comparable({f"--{k} {v[0]}": v[1] for k, v in arms.items()} | {f"--hidden_from {hidden_from}": truth_meta})
    if args.zero_action:
        # the task's zero action: hold the stance (not the nominal pose of an export trained around another one)
        arms["zero"] = ("zero action", stance_metadata(truth_meta), ZeroPolicy(truth_meta.action_dim))
    # one robot for every arm: the same drives, rebuilt per arm
    truth = draw_truth(truth_meta, args.hidden_seed, args.hidden_drives)
    make_robot = functools.partial(HiddenRobot, truth_meta, fixed_base=False, truth=truth)
    print(f"[realgap] hidden G1, {args.hidden_drives} drives, seed {args.hidden_seed} (drawn around {hidden_from}; "
          f"command delay {truth.delay_steps} steps), free base; {args.episodes} episodes of {args.duration_s:g} s, "
          f"pushes {lo:g}-{hi:g} m/s every {ilo:g}-{ihi:g} s, seed {args.seed}", flush=True)  # fmt: skip
    settings = dict(episodes=args.episodes, duration_s=args.duration_s, push_mps=(lo, hi), push_interval_s=(ilo, ihi),
                    fall_height=args.fall_height, fall_tilt=args.fall_tilt, seed=args.seed)  # fmt: skip
    results, wall = {}, {}
    for name, (path, meta, policy) in arms.items():
        t0 = time.perf_counter()
        results[name] = survival(meta, policy, make_robot=make_robot, **settings)
        wall[name] = time.perf_counter() - t0
        falls = sum(r.fell for r in results[name])
        mean = sum(r.time_up_s for r in results[name]) / args.episodes
        print(f"{name:>8} {path}: mean time up {mean:.2f} s, falls {falls}/{args.episodes} "
              f"({wall[name] / args.episodes:.1f} s per episode)", flush=True)  # fmt: skip
    pairs = [(a, b) for a, b in (("policy", "against"), ("policy", "zero"), ("against", "zero")) if b in results]
    paired = {f"{a} - {b}": paired_time_up(results[a], results[b]) for a, b in pairs}
    for key, p in paired.items():
        print(f"[realgap] paired time up, {key}: {p.diff_mean_s:+.3f} ± {p.diff_se_s:.3f} s (mean ± standard error, "
              f"{p.episodes} episodes; falls {p.falls_a} vs {p.falls_b})")  # fmt: skip
    plan = schedules(args.episodes, args.duration_s, (lo, hi), (ilo, ihi), args.seed)
    report = {"hidden_robot": {"seed": args.hidden_seed, "drives": args.hidden_drives, "drawn_from": hidden_from,
                               "fixed_base": False, "truth": truth.to_dict()},
              "settings": settings, "exports": {k: v[0] for k, v in arms.items()},
              "wall_s_per_episode": {k: v / args.episodes for k, v in wall.items()},
              "paired": {k: dataclasses.asdict(v) for k, v in paired.items()},
              "per_episode": [{"pushes": [dataclasses.asdict(p) for p in s]}
                              | {k: dataclasses.asdict(results[k][e]) for k in results}
                              for e, s in enumerate(plan)]}  # fmt: skip
    stamp = f"seed{args.hidden_seed}_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}.json"
    out = Path(args.out) if args.out else Path("runs") / "hidden_compare" / stamp
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(finite_or_none(report), indent=2))
    print(f"[realgap] wrote {out}")
    if args.plot:
        labels = {k: f"{k}: {v[0]}" for k, v in arms.items()}
        title = f"hidden G1, {args.hidden_drives} drives, seed {args.hidden_seed}: {args.episodes} paired episodes"
        plot_standing(results, labels, args.duration_s, Path(args.plot), title)
        print(f"[realgap] wrote {args.plot}")
    return 0


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


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
