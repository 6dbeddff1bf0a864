"""Cost of domain randomization at reset: the balance env stepping with and without a DR profile.

    python scripts/bench_dr.py                      # 256 envs on the CPU, profile "nominal", 3 rounds
    python scripts/bench_dr.py --rounds 5 --std 1.0 # more rounds, more falls (resets)

One env is built with the profile; then rounds of one PPO iteration's worth of steps (24 policy steps) alternate
between three variants, so a busy shared CPU slows all of them alike:

- ``no DR``: the profile's event terms are switched off (the task's own reset and push terms still run);
- ``DR, fast sync``: the profile as applied by default (solver updated without ``set_const_0``);
- ``DR, exact sync``: Isaac Lab's update path (``set_const_0`` for every world at each step with a reset).

Actions are policy-like Gaussian noise (``--std`` in action units; the same stream for every variant), episode
lengths are spread as in PPO's first iteration. Reported per policy step: wall and process-CPU time, resets, and
the time spent inside reset events.
"""

from __future__ import annotations

import argparse
import time


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="Realgap-Balance-G1-v0", help="registered task id")
    p.add_argument("--num_envs", type=int, default=256, help="parallel envs")
    p.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N")
    p.add_argument("--profile", default="nominal", help="DR profile name or YAML path")
    p.add_argument("--rounds", type=int, default=3, help="rounds of 24 policy steps per variant")
    p.add_argument("--std", type=float, default=0.5, help="std of the random actions")
    p.add_argument("--seed", type=int, default=0, help="env and action seed")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(args.task, args.device, args.num_envs, args.seed, dr_profile=args.profile)
    dr_names = [name for name in vars(env_cfg.events) if name.startswith("dr_")]
    with simulation(env_cfg):
        env = make_env(args.task, env_cfg)
        env.reset()
        n, dim = env.num_envs, env.action_manager.total_action_dim
        gen = torch.Generator(device=env.device).manual_seed(args.seed)
        env.episode_length_buf[:] = torch.randint(
            0, int(env.max_episode_length), (n,), generator=gen, device=env.device
        )
        terms = {name: env.event_manager.get_term_cfg(name) for name in dr_names}
        funcs = {name: cfg.func for name, cfg in terms.items()}

        class Off:  # stands in for a class-based term: the event manager calls it and its reset
            def __call__(self, *args, **kwargs) -> None: ...

            def reset(self, env_ids=None) -> None: ...

        def set_variant(variant: str) -> None:
            for name, cfg in terms.items():
                cfg.func = funcs[name] if variant != "no DR" else Off()
                if "sync" in cfg.params:
                    cfg.params["sync"] = "exact" if variant == "DR, exact sync" else "fast"

        reset_s = [0.0]
        apply = env.event_manager.apply

        def timed_apply(*a, **kw):
            start = time.perf_counter()
            out = apply(*a, **kw)
            if kw.get("mode") == "reset":
                reset_s[0] += time.perf_counter() - start
            return out

        env.event_manager.apply = timed_apply
        variants = ["no DR", "DR, fast sync", "DR, exact sync"]
        for variant in variants:  # warm-up: compile every reset and model-update kernel once
            set_variant(variant)
            env._reset_idx(torch.arange(0, n, 8, device=env.device))
            env.step(args.std * torch.randn(n, dim, generator=gen, device=env.device))
        stats = {v: {"wall": 0.0, "cpu": 0.0, "resets": 0, "events": 0.0, "steps": 0} for v in variants}
        for _ in range(args.rounds):
            for variant in variants:
                set_variant(variant)
                s = stats[variant]
                reset_s[0] = 0.0
                wall, cpu = time.perf_counter(), time.process_time()
                for _ in range(24):
                    env.step(args.std * torch.randn(n, dim, generator=gen, device=env.device))
                    s["resets"] += int(env.reset_buf.sum())
                s["wall"] += time.perf_counter() - wall
                s["cpu"] += time.process_time() - cpu
                s["events"] += reset_s[0]
                s["steps"] += 24
        set_variant("DR, fast sync")
        env.close()

    print(
        f"\n[bench_dr] {args.task}, {args.num_envs} envs on {args.device}, profile {args.profile!r}: "
        f"{args.rounds} interleaved rounds of 24 policy steps per variant, action std {args.std}"
    )
    print(f"{'variant':<16} {'wall ms/step':>13} {'cpu ms/step':>12} {'resets/step':>12} {'reset events ms/step':>21}")
    per = {v: {k: s[k] / s["steps"] for k in ("wall", "cpu", "resets", "events")} for v, s in stats.items()}
    for variant, r in per.items():
        print(
            f"{variant:<16} {1e3 * r['wall']:>13.1f} {1e3 * r['cpu']:>12.1f} {r['resets']:>12.2f} "
            f"{1e3 * r['events']:>21.2f}"
        )
    base = per["no DR"]
    for variant in variants[1:]:
        r = per[variant]
        print(
            f"{variant}: wall x{r['wall'] / base['wall']:.3f} ({100 * (r['wall'] / base['wall'] - 1):+.1f} %), "
            f"cpu x{r['cpu'] / base['cpu']:.3f} ({100 * (r['cpu'] / base['cpu'] - 1):+.1f} %)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
