"""Build one task on CUDA in this process, step it, and print one JSON line of what happened (run by the gpu tier).

    python tests/gpu/cuda_step.py TASK NUM_ENVS STEPS [--sync_debug]

With ``--sync_debug`` the stepping runs under ``torch.cuda.set_sync_debug_mode("error")``: any host sync in the
per-step path raises. The JSON holds: the graph captured, obs/reward finite, the buffer use (overflow), the device.
"""

import json
import sys

import torch


def main(argv: list[str]) -> int:
    task, num_envs, steps = argv[0], int(argv[1]), int(argv[2])
    from isaaclab_newton.physics import NewtonManager

    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.sim.buffers import buffer_use
    from realgap.envs.sim.nan_guard import FiniteVecEnv

    env_cfg, _ = load_cfgs(task, "cuda", num_envs, 0)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        vec = FiniteVecEnv(env)
        vec.get_observations()
        act = torch.zeros(num_envs, env.action_manager.total_action_dim, device=env.device)
        for _ in range(3):  # warm-up: the CUDA graph is captured here (capture itself may sync)
            vec.step(act)
        finite = torch.ones((), dtype=torch.bool, device=env.device)
        if "--sync_debug" in argv:
            torch.cuda.set_sync_debug_mode("error")
        for _ in range(steps):
            obs, rew, _, _ = vec.step(act)
            finite &= torch.isfinite(obs["policy"]).all() & torch.isfinite(rew).all()
        torch.cuda.set_sync_debug_mode("default")
        use = buffer_use()
        print(json.dumps({"device": str(env.device), "graph": NewtonManager._graph is not None, "finite": bool(finite),
                          "overflowed": use.overflowed, "contacts": [use.contacts, use.contacts_max],
                          "rows": [use.rows_peak, use.rows_max]}))  # fmt: skip
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
