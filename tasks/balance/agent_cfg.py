"""PPO (rsl-rl-lib through isaaclab_rl) for the balance task, sized to learn on a 2-core CPU."""

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg, RslRlSymmetryCfg

from realgap.envs.sim.physics import default_device


@configclass
class BalancePPOCfg(RslRlOnPolicyRunnerCfg):
    device: str = default_device()
    seed: int = 42
    num_steps_per_env: int = 24
    max_iterations: int = 1500
    save_interval: int = 25
    experiment_name: str = "balance_g1"
    obs_groups: dict = {"actor": ["policy"], "critic": ["critic"]}
    clip_actions: float | None = 4.0
    """Raw actions are clipped to +-4 units (4 x 25 % of peak torque worth of joint-target offset)."""
    actor_output_init_scale: float = 0.01
    """Initial actor output layer scale (RealgapRunner): the untrained policy's mean action is ~0 = hold the stance."""
    actor_init_std_by_joint: dict | None = None
    """Per-joint initial exploration std, ``{joint regex: std}`` (RealgapRunner), over the actor's ``init_std`` for the
    joints matched; a lever, off (e.g. ``--set 'agent.actor_init_std_by_joint={".*_hip_pitch_joint": 0.3}'``)."""
    actor: RslRlMLPModelCfg = RslRlMLPModelCfg(
        hidden_dims=[256, 128, 128],
        activation="elu",
        obs_normalization=True,
        # Small initial exploration: random actions of std 1.0 knock the G1 over faster than PPO learns on a CPU, and
        # at 0.25 the exploration noise alone still knocked robots over under the pushes; 0.1 is a joint-target noise
        # of 0.004-0.012 rad through G1_ACTION_SCALE (docs/results/balance.md).
        distribution_cfg=RslRlMLPModelCfg.GaussianDistributionCfg(init_std=0.1),
    )
    critic: RslRlMLPModelCfg = RslRlMLPModelCfg(hidden_dims=[256, 128, 128], activation="elu", obs_normalization=True)
    algorithm: RslRlPpoAlgorithmCfg = RslRlPpoAlgorithmCfg(
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.0,  # no push towards more noise: the exploration std above is already all the robot tolerates
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=1.0e-3,
        schedule="adaptive",
        gamma=0.99,
        lam=0.95,
        # 0.02 rather than rsl-rl's usual 0.01: with a small exploration std every Adam step is a large KL step, and
        # at 0.01 the adaptive schedule pins the learning rate at its 1e-5 floor.
        desired_kl=0.02,
        max_grad_norm=1.0,
        # Left-right symmetry (tasks/balance/symmetry.py): every mini-batch also carries its mirror image, so one
        # rollout teaches the answer to a push and to its mirrored push (rsl-rl-lib's data augmentation).
        symmetry_cfg=RslRlSymmetryCfg(
            use_data_augmentation=True,
            use_mirror_loss=False,
            data_augmentation_func="realgap.tasks.balance.symmetry:augment_with_mirror",
        ),
    )
