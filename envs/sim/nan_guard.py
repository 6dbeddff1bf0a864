"""NaN guard: a diverged env is terminated, reset and counted; no NaN or Inf ever reaches PPO.

Two parts, both cheap (one ``isfinite`` reduction per step):

- :func:`non_finite_state`, a termination term (not a time-out): an env whose root or joint state holds a NaN/Inf
  terminates, so Isaac Lab resets it in the same step and writes a clean state; its count appears in the logs as
  ``Episode_Termination/non_finite_state``. MuJoCo-Warp integrates every world independently, so the other envs are
  unaffected.
- :class:`FiniteVecEnv`, the rsl-rl wrapper with a last line of defence: rewards and observations are sanitized
  (non-finite → 0) after every step, and how many values were replaced is logged as ``Guard/non_finite_values``.
  With the termination term in place this should stay 0; if it is not, something outside the robot state diverged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg
from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def non_finite_state(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
    """True for envs whose asset's root pose/velocity or (articulations) joint position/velocity holds a NaN or Inf.

    Shape:
        Returns ``(num_envs,)`` bool.
    """
    asset = env.scene[asset_cfg.name]
    data = asset.data
    finite = torch.isfinite(data.root_pos_w.torch).all(dim=-1) & torch.isfinite(data.root_quat_w.torch).all(dim=-1)
    finite &= torch.isfinite(data.root_vel_w.torch).all(dim=-1)
    if getattr(asset, "num_joints", 0) > 0:  # a rigid object has no joints
        finite &= torch.isfinite(data.joint_pos.torch).all(dim=-1) & torch.isfinite(data.joint_vel.torch).all(dim=-1)
    return ~finite


def _sanitize(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``values`` with every NaN/Inf replaced by 0, and how many there were (a tensor: no device sync here)."""
    bad = ~torch.isfinite(values)
    return torch.where(bad, torch.zeros_like(values), values), bad.sum(dtype=torch.float32)


class FiniteVecEnv(RslRlVecEnvWrapper):
    """``RslRlVecEnvWrapper`` whose observations and rewards are always finite (see the module docstring)."""

    def step(self, actions: torch.Tensor):
        obs, rew, dones, extras = super().step(actions)
        rew, bad = _sanitize(rew)
        for key in list(obs.keys()):
            obs[key], n = _sanitize(obs[key])
            bad += n
        # a 0-d tensor on the env's device: rsl-rl's logger averages it per iteration, so no host sync per step
        extras.setdefault("log", {})["Guard/non_finite_values"] = bad
        return obs, rew, dones, extras
