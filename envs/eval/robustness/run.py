"""Run a robustness :class:`~realgap.envs.eval.robustness.sweep.Plan`: batches of envs, one point and one counted
episode per env.

Used by ``scripts/evaluate.py`` (and, through it, ``scripts/compare_actions.py``). The env must be built from a config
passed through :func:`realgap.envs.eval.robustness.prepare.prepare_env_cfg`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from realgap.envs.eval.policies import Policy
from realgap.envs.eval.robustness.apply import pin_term
from realgap.envs.eval.robustness.sweep import Episode, Plan, Point, pack, point_values
from realgap.envs.run.progress import Progress


@torch.inference_mode()
def first_episodes(env: Any, policy: Policy) -> list[Episode]:
    """Reset every env and run until each has ended one episode; that first episode of each env, in env order.

    Success is the task's ``env_cfg.episode_success`` when it defines one (grasp), else survival to the time-out.
    """
    obs, _ = env.reset()
    n = env.num_envs
    ret = torch.zeros(n, device=env.device)
    steps = torch.zeros(n, dtype=torch.long, device=env.device)
    ended = torch.zeros(n, dtype=torch.bool, device=env.device)
    out: list[Episode | None] = [None] * n
    success_fn = getattr(env.cfg, "episode_success", None)
    terms = list(env.termination_manager.active_terms)
    for _ in range(int(env.max_episode_length) + 2):
        obs, rew, terminated, truncated, _ = env.step(policy(obs["policy"]))
        ret += rew
        steps += 1
        done = (terminated | truncated) & ~ended
        if bool(done.any()):
            success = success_fn(env) if success_fn is not None else None
            fired = torch.stack([env.termination_manager.get_term(t) for t in terms], -1).tolist()
            for i in done.nonzero().flatten().tolist():
                survived = bool(truncated[i]) and not bool(terminated[i])
                ok = survived if success is None else bool(success[i])
                ended_by = tuple(t for t, f in zip(terms, fired[i], strict=True) if f)
                out[i] = Episode(ok, survived, float(steps[i]) * env.step_dt, float(ret[i]), ended_by)
            ended |= done
        if bool(ended.all()):
            break
    if not bool(ended.all()):
        raise RuntimeError(f"{int((~ended).sum())} envs did not end an episode within the episode length")
    return [e for e in out if e is not None]


def run_plan(
    env: Any,
    policies: Mapping[str, Policy],
    plan: Plan,
    episodes: int,
    seed: int = 0,
    progress_interval_s: float = 30.0,
) -> dict[str, dict[Point, list[Episode]]]:
    """Evaluate every policy at every point of ``plan`` for ``episodes`` episodes each.

    Points are packed into batches of ``env.num_envs`` envs (spare envs of the last batch run the nominal point and
    are not counted). Every policy sees the same batches with the same torch seed (``seed`` + batch index), so the
    resets and pushes they face are drawn alike.

    Progress (episodes done of points × episodes × policies, with an ETA) is shown every ``progress_interval_s``.

    Returns:
        Policy label → point → its episodes.
    """
    term = pin_term(env)
    batches = pack(plan.points, episodes, env.num_envs)
    results: dict[str, dict[Point, list[Episode]]] = {label: {p: [] for p in plan.points} for label in policies}
    progress = Progress(
        "[realgap] evaluate",
        len(plan.points) * episodes * len(policies),
        unit="episodes",
        interval_s=progress_interval_s,
    )
    for b, batch in enumerate(batches):
        rows = [point_values(p, plan.nominal) for p in batch]
        rows += [dict(plan.nominal)] * (env.num_envs - len(batch))
        term.set_values({k: torch.tensor([r[k] for r in rows]) for k in plan.nominal})
        for label, policy in policies.items():
            torch.manual_seed(seed + b)
            for point, episode in zip(batch, first_episodes(env, policy), strict=False):
                results[label][point].append(episode)
            progress.update(len(batch), batch=f"{b + 1}/{len(batches)}", policy=label)
    progress.close()
    return results
