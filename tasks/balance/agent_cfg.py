"""PPO (rsl-rl-lib through isaaclab_rl) for the balance task, sized to learn on a 2-core CPU."""

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg

from realgap.envs.physics import default_device


@configclass
class BalancePPOCfg(RslRlOnPolicyRunnerCfg):
    device: str = default_device()
    seed: int = 42
    num_steps_per_env: int = 24
    max_iterations: int = 1500
    save_interval: int = 25
    experiment_name: str = "balance_g1"
    obs_groups: dict = {"actor": ["policy"], "critic": ["critic"]}
    clip_actions: float | None = None  # the action term clips joint offsets itself
    actor: RslRlMLPModelCfg = RslRlMLPModelCfg(
        hidden_dims=[256, 128, 128],
        activation="elu",
        obs_normalization=True,
        # Small initial exploration: with std 1.0 random actions knock the G1 over faster than PPO learns on a CPU
        # (DESIGN.md); 0.3 x action scale 0.25 = 0.075 rad of joint-target noise.
        distribution_cfg=RslRlMLPModelCfg.GaussianDistributionCfg(init_std=0.3),
    )
    critic: RslRlMLPModelCfg = RslRlMLPModelCfg(hidden_dims=[256, 128, 128], activation="elu", obs_normalization=True)
    algorithm: RslRlPpoAlgorithmCfg = RslRlPpoAlgorithmCfg(
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.005,
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=1.0e-3,
        schedule="adaptive",
        gamma=0.99,
        lam=0.95,
        desired_kl=0.01,
        max_grad_norm=1.0,
    )
