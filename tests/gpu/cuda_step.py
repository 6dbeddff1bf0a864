"""Build one task on CUDA in this process, step it, and print one JSON line of what happened (run by the gpu tier).

    python tests/gpu/cuda_step.py TASK NUM_ENVS STEPS [--sync_debug] [--episode_s S]

With ``--sync_debug`` the stepping runs under torch's sync check (``set_sync_debug_mode("warn")``), every sync
attributed by its call stack (:func:`realgap.envs.sim.sync_audit.cuda_sync_warnings`): Isaac Lab and rsl-rl sync on
their own (``reset_buf.nonzero()`` every step), realgap's code must not. ``--episode_s`` shortens the episodes so the
stepping crosses resets. The JSON holds: the graph captured, obs/reward finite, the buffer use (overflow), the device,
and the syncs (realgap's outside the reset validation checks, the validation checks, the libraries').
"""

import contextlib
import json
import sys

import torch


def main(argv: list[str]) -> int:
    task, num_envs, steps = argv[0], int(argv[1]), int(argv[2])
    from isaaclab_newton.physics import NewtonManager

    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.sim.buffers import buffer_use
    from realgap.envs.sim.nan_guard import FiniteVecEnv
    from realgap.envs.sim.sync_audit import cuda_sync_warnings

    env_cfg, _ = load_cfgs(task, "cuda", num_envs, 0)
    if "--episode_s" in argv:
        env_cfg.episode_length_s = float(argv[argv.index("--episode_s") + 1])
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        vec = FiniteVecEnv(env)
        vec.get_observations()
        act = torch.zeros(num_envs, env.action_manager.total_action_dim, device=env.device)
        for _ in range(3):  # warm-up: the CUDA graph is captured here (capture itself may sync)
            vec.step(act)
        finite = torch.ones((), dtype=torch.bool, device=env.device)
        audit = cuda_sync_warnings() if "--sync_debug" in argv else contextlib.nullcontext([])
        with audit as syncs:
            for _ in range(steps):
                obs, rew, _, _ = vec.step(act)
                finite &= torch.isfinite(obs["policy"]).all() & torch.isfinite(rew).all()
        use = buffer_use()
        mine = [r for r in syncs if r.owner == "realgap"]
        print(
            json.dumps(
                {
                    "device": str(env.device),
                    "graph": NewtonManager._graph is not None,
                    "finite": bool(finite),
                    "overflowed": use.overflowed,
                    "contacts": [use.contacts, use.contacts_max],
                    "rows": [use.rows_peak, use.rows_max],
                    "realgap_syncs": [f"{r.op} at {r.where}" for r in mine if not r.validation],
                    "validation_syncs": sum(r.validation for r in mine),
                    "library_syncs": sum(r.owner == "library" for r in syncs),
                }
            )
        )
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
