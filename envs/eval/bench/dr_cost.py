"""Cost of reset-time domain randomization (``scripts/bench_dr.py``): one env built with a DR profile, stepped in
interleaved rounds under three variants so that a busy shared CPU slows all of them alike.

- ``no DR``: the profile's event terms are switched off (the task's own reset and push terms still run);
- ``DR, fast sync``: the profile as applied by default (solver updated without ``set_const_0``);
- ``DR, exact sync``: Isaac Lab's update path (``set_const_0`` for every world at each step with a reset).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from realgap.envs.dr.profile import load_dr_profile
from realgap.envs.run.factory import load_cfgs, make_env, simulation
from realgap.tasks import DEFAULT_TASK, check_task

VARIANTS = ("no DR", "DR, fast sync", "DR, exact sync")
STEPS_PER_ROUND = 24
"""One PPO iteration's worth of policy steps."""


class _Off:
    """Stands in for a switched-off term: the event manager calls it and its reset."""

    def __call__(self, *args: Any, **kwargs: Any) -> None: ...

    def reset(self, env_ids: Any = None) -> None: ...


class _TimedTerm:
    """An event term that adds the time spent in it (s) to :attr:`seconds`; :attr:`inner` is the term it runs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        out = self.inner(*args, **kwargs)
        self.seconds += time.perf_counter() - start
        return out

    def reset(self, env_ids: Any = None) -> None:
        if hasattr(self.inner, "reset"):
            self.inner.reset(env_ids)


def reset_dr_cost(
    task: str, num_envs: int, device: str, profile: str, rounds: int, std: float, seed: int
) -> dict[str, dict[str, float]]:
    """Per policy step and variant: wall and process-CPU time (s), resets, and time inside reset events (s).

    Actions are Gaussian noise of ``std`` (action units; the same stream for every variant); episode lengths are
    spread as in PPO's first iteration.
    """
    import torch

    env_cfg, _ = load_cfgs(task, device, num_envs, seed, dr_profile=profile)
    dr_names = [name for name in vars(env_cfg.events) if name.startswith("dr_")]
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        env.reset()
        n, dim = env.num_envs, env.action_manager.total_action_dim
        gen = torch.Generator(device=env.device).manual_seed(seed)
        env.episode_length_buf[:] = torch.randint(
            0, int(env.max_episode_length), (n,), generator=gen, device=env.device
        )
        timed = {}
        for name in env.event_manager.active_terms.get("reset", []):
            cfg = env.event_manager.get_term_cfg(name)
            cfg.func = timed[name] = _TimedTerm(cfg.func)
        dr_terms = {name: env.event_manager.get_term_cfg(name) for name in dr_names}
        funcs = {name: timed[name].inner if name in timed else cfg.func for name, cfg in dr_terms.items()}

        def set_variant(variant: str) -> None:
            for name, cfg in dr_terms.items():
                func = funcs[name] if variant != "no DR" else _Off()
                if name in timed:
                    timed[name].inner = func
                else:
                    cfg.func = func
                if "sync" in cfg.params:
                    cfg.params["sync"] = "exact" if variant == "DR, exact sync" else "fast"

        def act() -> torch.Tensor:
            return std * torch.randn(n, dim, generator=gen, device=env.device)

        for variant in VARIANTS:  # warm-up: compile every reset and model-update kernel once
            set_variant(variant)
            env.reset(env_ids=torch.arange(0, n, 8, device=env.device))
            env.step(act())
        stats = {v: {"wall": 0.0, "cpu": 0.0, "resets": 0.0, "events": 0.0} for v in VARIANTS}
        for _ in range(rounds):
            for variant in VARIANTS:
                set_variant(variant)
                s = stats[variant]
                for term in timed.values():
                    term.seconds = 0.0
                wall, cpu = time.perf_counter(), time.process_time()
                for _ in range(STEPS_PER_ROUND):
                    env.step(act())
                    s["resets"] += int(env.reset_buf.sum())
                s["wall"] += time.perf_counter() - wall
                s["cpu"] += time.process_time() - cpu
                s["events"] += sum(term.seconds for term in timed.values())
        set_variant("DR, fast sync")
        env.close()
    steps = rounds * STEPS_PER_ROUND
    return {v: {k: x / steps for k, x in s.items()} for v, s in stats.items()}


@dataclass(frozen=True)
class BenchDrRequest:
    """A DR cost measure as scripts/bench_dr.py's flags give it (see its ``--help`` for each)."""

    task: str = DEFAULT_TASK
    num_envs: int = 256
    device: str | None = None
    seed: int = 0
    profile: str = "nominal"
    rounds: int = 3
    std: float = 0.5


def bench_dr(req: BenchDrRequest) -> list[str]:
    """Measure :func:`reset_dr_cost` for ``req`` (task and profile refused before an env is built); the lines to print:
    the setting, a row per variant (wall and CPU ms, resets, reset-event ms per policy step), each DR variant's ratios
    to no DR."""
    check_task(req.task)
    load_dr_profile(req.profile)  # both refused before an env is built
    per = reset_dr_cost(req.task, req.num_envs, req.device, req.profile, req.rounds, req.std, req.seed)
    lines = [
        f"\n[bench_dr] {req.task}, {req.num_envs} envs on {req.device}, profile {req.profile!r}: "
        f"{req.rounds} interleaved rounds of {STEPS_PER_ROUND} policy steps per variant, action std {req.std}",
        f"{'variant':<16} {'wall ms/step':>13} {'cpu ms/step':>12} {'resets/step':>12} {'reset events ms/step':>21}",
    ]
    for variant, r in per.items():
        lines.append(
            f"{variant:<16} {1e3 * r['wall']:>13.1f} {1e3 * r['cpu']:>12.1f} {r['resets']:>12.2f} "
            f"{1e3 * r['events']:>21.2f}"
        )
    base = per["no DR"]
    for variant in VARIANTS[1:]:
        r = per[variant]
        lines.append(
            f"{variant}: wall x{r['wall'] / base['wall']:.3f} ({100 * (r['wall'] / base['wall'] - 1):+.1f} %), "
            f"cpu x{r['cpu'] / base['cpu']:.3f} ({100 * (r['cpu'] / base['cpu'] - 1):+.1f} %)"
        )
    return lines
