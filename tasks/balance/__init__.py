"""Humanoid balance task (Unitree G1): registration of the gymnasium ids."""

import gymnasium as gym

gym.register(
    id="Realgap-Balance-G1-v0",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:BalanceEnvCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agent_cfg:BalancePPOCfg",
    },
)

gym.register(
    id="Realgap-Balance-G1-Play-v0",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:BalanceEnvCfg_PLAY",
        "rsl_rl_cfg_entry_point": f"{__name__}.agent_cfg:BalancePPOCfg",
    },
)
