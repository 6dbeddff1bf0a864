"""PPO (rsl-rl-lib through isaaclab_rl) for every arm action space of the grasp task, sized for a CPU.

All variants share the network, the PPO hyper-parameters and the sample budget; only the experiment name and the
initial exploration noise differ, because one unit of action means different things (0.5 rad of target, 0.05 rad of
increment, 1 rad/s, 10 N·m, 1 cm of TCP motion, 5 cm of impedance target; see ``actions.py``).
"""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg

from realgap.envs.sim.physics import default_device
from realgap.tasks.grasp.actions import get_action_space

INIT_STD: dict[str, float] = {
    # Absolute joint targets: without a motion generator, 0.3 (0.15 rad of target noise) crossed the 2.175 rad/s limit
    # within two steps of every episode and only 0.05 stayed clear of the reflex, too little to ever reach the cube
    # (docs/results/action_spaces.md). The rate-limited setpoint (actions.py) follows any target within the arm's
    # limits, so these interfaces explore like the others.
    "joint_pos": 0.3,
    "joint_pos_delta": 0.5,  # 0.025 rad per step, a random walk of the target
    "joint_vel": 0.3,  # 0.3 rad/s
    "joint_torque": 0.3,  # 3 N·m on the big joints, 0.45 N·m on the wrist, on top of gravity compensation
    "joint_pd_gravity": 0.3,  # absolute targets through the same motion generator, like joint_pos
    "ee_pose_delta": 0.5,  # 0.5 cm and 0.01 rad per step (0.25 m/s, 0.5 rad/s)
    "computed_torque": 0.3,  # absolute targets through the same motion generator, like joint_pos
    "cartesian_impedance": 0.3,  # 1.5 cm and 0.015 rad of re-based target: ~0.1 m/s, 0.1 rad/s of TCP motion
}
"""Initial action noise std per action space (units of the action, see the module docstring)."""


@configclass
class GraspPPOCfg(RslRlOnPolicyRunnerCfg):
    device: str = default_device()
    seed: int = 42
    num_steps_per_env: int = 24
    max_iterations: int = 1500
    save_interval: int = 50
    experiment_name: str = "grasp_franka_joint_pos"
    obs_groups: dict = {"actor": ["policy"], "critic": ["policy"]}
    clip_actions: float | None = 5.0
    actor_output_init_scale: float = 0.01
    """Initial actor output layer scale (RealgapRunner): the untrained policy's mean action is ~0 = hold the ready
    pose (a random network's O(1) output would ask for targets up to 0.5 rad away and trip the joint-speed reflex)."""
    actor: RslRlMLPModelCfg = RslRlMLPModelCfg(
        hidden_dims=[256, 128, 64],
        activation="elu",
        obs_normalization=True,
        distribution_cfg=RslRlMLPModelCfg.GaussianDistributionCfg(init_std=0.3),
    )
    critic: RslRlMLPModelCfg = RslRlMLPModelCfg(hidden_dims=[256, 128, 64], activation="elu", obs_normalization=True)
    algorithm: RslRlPpoAlgorithmCfg = RslRlPpoAlgorithmCfg(
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.006,
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=1.0e-3,
        schedule="adaptive",
        gamma=0.98,
        lam=0.95,
        desired_kl=0.01,
        max_grad_norm=1.0,
    )


def grasp_ppo_cfg(action_space: str = "joint_pos") -> GraspPPOCfg:
    """PPO config for the grasp task with ``action_space`` (raises ``ValueError`` listing the known ones)."""
    get_action_space(action_space)
    cfg = GraspPPOCfg()
    cfg.experiment_name = f"grasp_franka_{action_space}"
    cfg.actor.distribution_cfg.init_std = INIT_STD[action_space]
    return cfg
