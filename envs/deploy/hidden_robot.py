"""A stand-in "real" robot (the G1 of a balance export, the Panda of a grasp export): a position-commanded MuJoCo
robot whose drives differ from the datasheet, drawn from a seed.

Identification (:mod:`realgap.envs.identify.fit`) must recover these numbers from a log alone, so it never imports
this module; only the tests and the ``--robot hidden`` option of ``realgap deploy`` do. The truth is
drawn per joint (one bus delay for the robot) from :func:`draw_truth`:

- command delay: 1..3 physics steps (5–15 ms at 200 Hz) — the bus and drive latency of a real robot;
- Coulomb friction: datasheet × U(1.7, 2.3) ("×2"); viscous friction U(0.05, 0.25) N·m·s/rad (the datasheet says 0);
- realized kp: commanded × U(0.75, 0.85) ("×0.8", e.g. a torque constant below spec); kd: × U(0.9, 1.1);
- armature (reflected rotor inertia): datasheet × U(1.3, 1.7) ("×1.5");
- peak torque: datasheet × U(0.8, 0.95) (battery sag, derating).

Those are the ``default`` drives. ``drives="worn"`` (:data:`DRIVE_FAMILIES`) draws a robot further from its datasheet,
one the datasheet policy is not made for: delay 4..6 steps (20–30 ms), Coulomb × U(2.5, 3.5), viscous U(0.2, 0.5),
kp × U(0.5, 0.6), kd × U(0.8, 1.0), armature × U(1.8, 2.2), peak torque × U(0.6, 0.75). A seed draws the same numbers
in both families' ranges (the same generator, the same order).

The robot runs its own servo like a Unitree drive: it receives ``(q*, q̇*, kp, kd)`` every control period and computes
the torque with the realgap :class:`~realgap.actuators.chain.ActuatorChain` (delay, PD with the realized gains,
torque–speed saturation); MuJoCo applies friction (``frictionloss`` / ``damping``) and the armature. It reports the
motor torque it applied (:meth:`read_torque`, what a current sensor gives). numpy + mujoco.

Its sensors can be noisy (:class:`SensorNoise`, off by default): white Gaussian noise on the joint positions,
velocities and the motor torque it *reports* (the drive's own servo reads its encoder, so the noise does not enter
the PD), drawn from a generator seeded apart from the truth. ``SENSOR_NOISE["typical"]`` is a stated guess at a good
drive, not a measurement: 0.1 mrad on q (a 16-bit absolute encoder), 0.02 rad/s on q̇ (differentiated and filtered
by the drive), 1 % of the peak torque on τ (current sensing).

Two mounts, the same truth for a seed: welded ``hang_m`` above the start pose (``fixed_base=True``, the default: the
identification motion, feet clear of the ground) or free-floating in the exported start pose, feet on the ground
(``fixed_base=False``: closed-loop balance episodes with pushes and falls, :mod:`realgap.envs.deploy.episode`).

The held-out robot suite (:mod:`realgap.envs.eval.suite`) builds its robots here too, with options that default to
the behaviour above: a command delay per joint (``HiddenTruth.delay_steps`` as an array: joints on different buses),
a plant built elsewhere (``sim``: inertia, contacts or a grasp scene already edited), a drive that computes its PD
torque once per command and holds it (``hold_period_steps``, as unitree_mujoco's bridge), gravity compensated by the
robot's own controller (``gravity_compensated``, the Franka's), and IMU noise and bias (:class:`SensorNoise`).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from realgap.actuators.chain import ActuatorChain, ChainTiming
from realgap.envs.deploy.mujoco_robot import MujocoRobot
from realgap.envs.deploy.robot import ImuState, JointState, Robot
from realgap.envs.format.metadata import PolicyMetadata


@dataclass(frozen=True)
class HiddenTruth:
    """The hidden robot's actuator parameters (per joint in ``meta.joint_names`` order, SI units).

    Attributes:
        delay_steps: Command delay, physics steps: one for the robot, or one per joint (``(J,)`` integers).
        kp_scale: Realized / commanded stiffness. kd_scale: Realized / commanded damping.
        coulomb_nm: Coulomb friction, N·m. viscous_nms: Viscous friction, N·m·s/rad.
        armature: Reflected inertia, kg·m². peak_torque: Torque limit, N·m.
    """

    delay_steps: int | np.ndarray
    kp_scale: np.ndarray
    kd_scale: np.ndarray
    coulomb_nm: np.ndarray
    viscous_nms: np.ndarray
    armature: np.ndarray
    peak_torque: np.ndarray

    def to_dict(self) -> dict[str, int | list[float]]:
        """Plain numbers (JSON): the delay, and a list per joint of every other parameter."""
        return {f.name: np.asarray(getattr(self, f.name)).tolist() for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class SensorNoise:
    """Standard deviations of the white noise on what the hidden robot reports.

    Attributes:
        q_rad: Joint position, rad. qd_rads: Joint velocity, rad/s. tau_frac: Motor torque, fraction of each joint's
            datasheet peak torque.
        seed: Seed of the noise generator (apart from the truth's).
        gyro_rads: IMU angular velocity, rad/s. gravity_rad: IMU attitude (a small rotation of the gravity direction
            about each body axis), rad.
        gyro_bias_rads: Constant gyro offset per body axis, rad/s. tilt_bias_rad: Constant attitude error about the
            body x and y axes (IMU mounting, estimator bias), rad.
    """

    q_rad: float = 0.0
    qd_rads: float = 0.0
    tau_frac: float = 0.0
    seed: int = 0
    gyro_rads: float = 0.0
    gravity_rad: float = 0.0
    gyro_bias_rads: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tilt_bias_rad: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        values = (self.q_rad, self.qd_rads, self.tau_frac, self.gyro_rads, self.gravity_rad)
        if not all(np.isfinite(v) and v >= 0 for v in values):
            raise ValueError(
                f"SensorNoise: standard deviations must be finite and >= 0, got q_rad={self.q_rad}, "
                f"qd_rads={self.qd_rads}, tau_frac={self.tau_frac}, gyro_rads={self.gyro_rads}, "
                f"gravity_rad={self.gravity_rad}"
            )
        if len(self.gyro_bias_rads) != 3 or len(self.tilt_bias_rad) != 2:
            raise ValueError(
                f"SensorNoise: gyro_bias_rads needs 3 values and tilt_bias_rad 2, got "
                f"{self.gyro_bias_rads} and {self.tilt_bias_rad}"
            )

    @property
    def imu(self) -> bool:
        """Whether any IMU noise or bias is set."""
        return bool(self.gyro_rads or self.gravity_rad or any(self.gyro_bias_rads) or any(self.tilt_bias_rad))


SENSOR_NOISE = {"none": SensorNoise(), "typical": SensorNoise(q_rad=1e-4, qd_rads=0.02, tau_frac=0.01)}
"""Named noise levels (``--sensor_noise`` of ``realgap deploy --robot hidden``)."""


DRIVE_FAMILIES: dict[str, dict[str, tuple[float, float]]] = {
    # delay_steps: integers lo..hi inclusive; the rest: uniform ranges (scales of the datasheet, viscous in N·m·s/rad)
    "default": {
        "delay_steps": (1, 3),
        "kp_scale": (0.75, 0.85),
        "kd_scale": (0.9, 1.1),
        "coulomb": (1.7, 2.3),
        "viscous_nms": (0.05, 0.25),
        "armature": (1.3, 1.7),
        "peak_torque": (0.8, 0.95),
    },
    "worn": {
        "delay_steps": (4, 6),
        "kp_scale": (0.5, 0.6),
        "kd_scale": (0.8, 1.0),
        "coulomb": (2.5, 3.5),
        "viscous_nms": (0.2, 0.5),
        "armature": (1.8, 2.2),
        "peak_torque": (0.6, 0.75),
    },
}
"""The hidden drives' ranges by family (module docstring): ``default``, and ``worn``, further from the datasheet."""


def draw_truth(meta: PolicyMetadata, seed: int, drives: str = "default") -> HiddenTruth:
    """The hidden parameters for ``seed``, drawn in the ranges of the family ``drives`` (:data:`DRIVE_FAMILIES`).

    Raises:
        ValueError: ``drives`` names no family.
    """
    if drives not in DRIVE_FAMILIES:
        raise ValueError(f"unknown hidden drive family {drives!r}; known: {', '.join(DRIVE_FAMILIES)}")
    r = DRIVE_FAMILIES[drives]
    rng = np.random.default_rng(seed)
    n = len(meta.joint_names)
    return HiddenTruth(
        delay_steps=int(rng.integers(r["delay_steps"][0], r["delay_steps"][1] + 1)),
        kp_scale=rng.uniform(*r["kp_scale"], n),
        kd_scale=rng.uniform(*r["kd_scale"], n),
        coulomb_nm=meta.joint_array("coulomb_friction") * rng.uniform(*r["coulomb"], n),
        viscous_nms=rng.uniform(*r["viscous_nms"], n),
        armature=meta.joint_array("armature") * rng.uniform(*r["armature"], n),
        peak_torque=meta.joint_array("peak_torque") * rng.uniform(*r["peak_torque"], n),
    )


class HiddenRobot(Robot):
    """The G1 of ``meta`` with hidden drives (see the module docstring), welded above its start pose or free-floating.

    Args:
        meta: The export whose robot this is (the datasheet the truth is drawn around).
        seed: Seed of :func:`draw_truth` (ignored when ``truth`` is given).
        fixed_base: Weld the base ``hang_m`` above the start pose (identification); False: a floating base starting
            in the exported start pose, feet on the ground (balance episodes: :meth:`push`, falls).
        hang_m: Height of the welded base above the start pose, m (0.5: feet clear of the ground; welded base only).
        truth: Explicit hidden parameters.
        noise: Noise on the reported joint states and torque (default none).
        drives: The family :func:`draw_truth` draws from (ignored when ``truth`` is given).
        sim: The plant, already built (e.g. with edited inertia or contacts, or the grasp scene); ``fixed_base`` and
            ``hang_m`` are then ignored. Default: :meth:`MujocoRobot.for_policy` of ``meta``.
        hold_period_steps: The drive receives a command every this many physics steps (:attr:`control_dt`) and
            computes its PD torque once on arrival, holding it until the next (unitree_mujoco's bridge); 1: a fresh
            PD every physics step.
        gravity_compensated: The robot's own controller adds the gravity torque of its links (the Franka's does):
            its g(q) is added to every torque the drive applies (inside its torque limit), so the runtime may run a
            policy whose action terms feed g(q) forward.

    Raises:
        ValueError: ``fixed_base=False`` for a robot the export fixes to the world (it has no base to float); a delay
            per joint of the wrong length or negative; ``hold_period_steps`` < 1.
    """

    command_mode = "position"
    simulated = False  # it brings its own latency: the runtime must not add the training delay
    hand_ramps = False  # its finger servo takes a target at once: the runtime ramps it as the real hand would

    def __init__(
        self,
        meta: PolicyMetadata,
        seed: int = 0,
        *,
        fixed_base: bool = True,
        hang_m: float = 0.5,
        truth: HiddenTruth | None = None,
        noise: SensorNoise | None = None,
        drives: str = "default",
        sim: MujocoRobot | None = None,
        hold_period_steps: int = 1,
        gravity_compensated: bool = False,
    ) -> None:
        if sim is None and not fixed_base and meta.robot.fixed_base:
            raise ValueError(
                f"a free-floating hidden robot needs a floating base; robot '{meta.robot.name}' of "
                f"{meta.task} is fixed to the world"
            )
        if hold_period_steps < 1:
            raise ValueError(f"hold_period_steps must be >= 1, got {hold_period_steps}")
        self.truth = draw_truth(meta, seed, drives) if truth is None else truth
        self.noise = SensorNoise() if noise is None else noise
        self._noise_rng = np.random.default_rng(self.noise.seed)
        self._tau_std = self.noise.tau_frac * meta.joint_array("peak_torque")
        if sim is None:
            mount = {"fixed_base": True, "hang_m": hang_m} if fixed_base else {}  # free: the start pose, feet down
            sim = MujocoRobot.for_policy(meta, **mount)
        self.sim = sim
        self.fixed_base = not sim.floating
        m, t = self.sim.model, self.truth
        vadr = self.sim.dof_adr
        m.dof_armature[vadr], m.dof_frictionloss[vadr], m.dof_damping[vadr] = t.armature, t.coulomb_nm, t.viscous_nms
        # the robot's controller adds g(q) of its own links (zero velocity: no Coriolis), computed on a scratch copy
        self._gravity_data = mujoco.MjData(m) if gravity_compensated else None
        self.gravity_compensated = gravity_compensated
        self.imu_body = self.sim.imu_body
        self.root_pos_w = self.sim.start_root_pos_w
        n = len(meta.joint_names)
        delay = np.asarray(t.delay_steps)
        if delay.ndim > 1 or delay.size not in (1, n) or (delay < 0).any() or (delay != np.round(delay)).any():
            raise ValueError(f"delay_steps must be one integer >= 0 or one per joint ({n}), got {t.delay_steps}")
        self.delay = np.broadcast_to(delay.astype(np.int64), (n,)).copy()
        params = meta.actuator_groups[0].joint_params()
        no_load = np.concatenate([g.joint_params().no_load_speed for g in meta.actuator_groups])
        order = [j for g in meta.actuator_groups for j in g.joint_names]
        perm = [order.index(j) for j in meta.joint_names]
        zeros = np.zeros(n)
        self._params = dataclasses.replace(
            params,
            kp=zeros,
            kd=zeros.copy(),
            peak_torque=t.peak_torque.copy(),
            no_load_speed=no_load[perm],
            coulomb_friction=zeros.copy(),
            viscous_friction=zeros.copy(),
            friction_velocity_scale=np.ones(n),
        )
        self.hold_period_steps = int(hold_period_steps)
        period = self.hold_period_steps  # the servo updates once per command and holds its torque (ChainTiming)
        timing = ChainTiming(float(self.sim.control_dt), decimation=period, servo_period_steps=period)
        self.chain = ActuatorChain(self._params, timing, 1)  # the delay is applied per joint in :meth:`step`
        self.reset()

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.sim.joint_names

    @property
    def control_dt(self) -> float:
        return self.sim.control_dt * self.hold_period_steps

    @property
    def description_hash(self) -> str:
        return self.sim.description_hash

    def read_joints(self) -> JointState:
        """The joint state as the bus reports it (with :attr:`noise`)."""
        state, n = self.sim.read_joints(), self.noise
        if n.q_rad == 0 and n.qd_rads == 0:
            return state
        rng, size = self._noise_rng, state.pos.shape
        return JointState(
            pos=state.pos + rng.normal(0.0, n.q_rad, size), vel=state.vel + rng.normal(0.0, n.qd_rads, size)
        )

    def read_imu(self) -> ImuState:
        """The IMU as the robot reports it: gyro with bias and white noise; gravity direction turned by the attitude
        bias and noise (small-angle rotation ``g' = g + g × δ``, renormalised)."""
        imu, n = self.sim.read_imu(), self.noise
        if not n.imu:
            return imu
        rng = self._noise_rng
        gyro = imu.ang_vel_b + np.asarray(n.gyro_bias_rads) + rng.normal(0.0, n.gyro_rads, 3)
        delta = np.array([n.tilt_bias_rad[0], n.tilt_bias_rad[1], 0.0]) + rng.normal(0.0, n.gravity_rad, 3)
        g = imu.projected_gravity_b
        g = g + np.array(
            [g[1] * delta[2] - g[2] * delta[1], g[2] * delta[0] - g[0] * delta[2], g[0] * delta[1] - g[1] * delta[0]]
        )
        return ImuState(gyro, g / np.linalg.norm(g))

    def send_joint_targets(self, q_target: np.ndarray, qd_target: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> None:
        t = self.truth
        realized = {"kp": np.asarray(kp) * t.kp_scale, "kd": np.asarray(kd) * t.kd_scale}
        self.chain.params = dataclasses.replace(self._params, **realized)
        self._command = np.stack([np.asarray(q_target, float), np.asarray(qd_target, float)])

    def _gravity_torque(self) -> np.ndarray:
        """g(q) of the joints at the current configuration, N·m (the bias force at zero velocity)."""
        m, g = self.sim.model, self._gravity_data
        g.qpos[:], g.qvel[:] = self.sim.data.qpos, 0.0
        mujoco.mj_kinematics(m, g)
        mujoco.mj_comPos(m, g)
        bias = np.zeros(m.nv)
        mujoco.mj_rne(m, g, 0, bias)
        return bias[self.sim.dof_adr]

    def read_torque(self) -> np.ndarray:
        """Motor torque applied over the period just stepped, as the drive reports it (with :attr:`noise`), N·m
        (friction acts behind it, in the gearbox)."""
        if self.noise.tau_frac == 0:
            return self._tau.copy()
        return self._tau + self._noise_rng.normal(0.0, 1.0, self._tau.shape) * self._tau_std

    def step(self) -> None:
        """One command period: ``hold_period_steps`` physics steps, each seeing the command of ``delay`` steps ago
        per joint (right after a reset only as late as the steps since the reset, as
        :class:`~realgap.actuators.delay.CommandDelay`)."""
        cols = np.arange(len(self.delay))
        for _ in range(self.hold_period_steps):
            self._history.append(self._command)
            past = np.maximum(len(self._history) - 1 - self.delay, 0)
            command = np.stack(self._history)[past, :, cols]  # (J, 2): each joint's delayed (q*, q̇*)
            joints = self.sim.read_joints()
            out = self.chain.compute(command[None, :, 0], command[None, :, 1], joints.pos[None, :], joints.vel[None, :])
            self._tau = out.tau_applied[0].copy()
            if self.gravity_compensated:  # the controller's g(q) on top, the sum inside the drive's torque limit
                self._tau = np.clip(self._tau + self._gravity_torque(), -self.truth.peak_torque, self.truth.peak_torque)
            self.sim.send_torques(self._tau)
            self.sim.step()

    # -- simulation helpers (not part of the Robot interface; those of :class:`MujocoRobot`) -------------------------
    def reset(self) -> None:
        """Back to the start pose at rest (welded: hanging), time 0; the drives unpowered, their delay line empty."""
        self.sim.reset()
        self.chain.params = self._params  # kp = kd = 0 until the first command
        self.chain.reset()
        n = len(self.sim.joint_names)
        self._command = np.stack([self.sim.read_joints().pos, np.zeros(n)])
        self._history: collections.deque[np.ndarray] = collections.deque(maxlen=int(self.delay.max()) + 1)
        self._tau = np.zeros(n)

    @property
    def time(self) -> float:
        """Simulated time since :meth:`reset`, s."""
        return self.sim.time

    def root_height(self) -> float:
        """Height of the root body origin, m."""
        return self.sim.root_height()

    def tilt(self) -> float:
        """Angle between the root body's z axis and the world vertical, rad."""
        return self.sim.tilt()

    def push(self, dv_xy: Sequence[float]) -> None:
        """Add a horizontal velocity change to the floating base, m/s (free base only)."""
        self.sim.push(dv_xy)
