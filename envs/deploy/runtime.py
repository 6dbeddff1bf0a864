"""Run an exported policy on a robot: numpy + onnxruntime only (no torch, no Isaac Lab, no simulator).

Per policy period (``policy_dt``) the runtime reads the joint encoders and the IMU, builds the observation with the
training layout, runs the ONNX policy, clips the raw action (``actions.raw_clip``) and maps it to joint targets term
by term (:mod:`realgap.envs.deploy.actions`). Then, for each of the ``policy_dt / control_dt`` control periods of the
robot:

- torque robots: the training :class:`~realgap.actuators.chain.ActuatorChain`, rebuilt from the exported per-joint
  parameters (numpy backend), turns the held target and the measured joint state into a torque: target
  hold/interpolation, PD at the servo rate, torque–speed saturation; the robot must step at the training physics
  rate, since the chain counts servo periods in physics steps. A *simulated* robot also gets what the real plant
  would bring itself: the training command delay (drawn per episode) and, when the chain applied them in training,
  the friction torque and the drive's physical stages;
- position robots: the (held or interpolated, command-filtered) targets and the training gains are sent to the
  robot's own servos.

Who applies what the training chain modelled beyond the PD and envelope (``docs/policy_format.md``), one rule:
*physical effects of the plant are applied by the runtime only for a simulated robot* (``Robot.simulated``), because
a real robot brings them itself and adding them would count them twice. That covers the command delay (the bus),
friction (the gearbox; and only where the chain, not the simulator, applied it in training) and the drive stages
(:mod:`realgap.envs.format.stages`): the current-loop lag, the speed cut-off as the drive enforces it, the compliant
transmission with backlash. The command low-pass on ``q*`` is a software filter the policy was trained behind: it is
part of the controller, so it runs on every robot where training ran it (a position robot gets it on the targets it
is sent, at its control period).

Before anything runs, :func:`check_compatible` refuses metadata that does not fit the robot (joint count, names and
order, rates, command mode, IMU body, robot description), naming every mismatch.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from realgap.actuators.chain import ActuatorChain, ChainStages, ChainTiming
from realgap.actuators.filters import LowPass, check_cutoff, lowpass_decay
from realgap.actuators.hold import TargetInterpolator
from realgap.envs.deploy.actions import ActionMapper
from realgap.envs.deploy.log import LogRecorder
from realgap.envs.deploy.objects import ObjectPose, task_observation_terms
from realgap.envs.deploy.observations import ObservationBuilder, Readings
from realgap.envs.deploy.robot import Robot
from realgap.envs.format.metadata import PolicyMetadata

Policy = Callable[[np.ndarray], np.ndarray]
"""Observation ``(D,)`` float32 → raw action ``(A,)``."""

_RATE_TOL = 1e-6


class MetadataMismatchError(ValueError):
    """The exported policy does not fit the robot; the message lists every mismatch."""


class ZeroPolicy:
    """Always the zero action (hold the default pose): the baseline a policy must beat."""

    def __init__(self, action_dim: int) -> None:
        self._zeros = np.zeros(action_dim, dtype=np.float32)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self._zeros


def runtime_stages(trained: ChainStages, simulated: bool) -> ChainStages:
    """The stages the deploy runtime's chain runs (module docstring): the command low-pass wherever training ran it,
    the drive's physical effects (speed cut-off, current loop, transmission) only for a simulated robot."""
    return ChainStages(
        velocity_limit=trained.velocity_limit and simulated,
        position_filter=trained.position_filter,
        torque_filter=trained.torque_filter and simulated,
        transmission=trained.transmission and simulated,
    )


def check_compatible(meta: PolicyMetadata, robot: Robot) -> int:
    """Check that ``meta`` fits ``robot``; return the robot's control periods per policy period.

    Raises:
        MetadataMismatchError: Listing each mismatch: joint count, joint names or order, a control period that does
            not divide the policy period, a torque robot not stepping at the training physics rate, an unknown
            command mode, another IMU body, or a different robot description.
    """
    problems = []
    names, want = tuple(robot.joint_names), meta.joint_names
    if len(names) != len(want):
        problems.append(f"joint count: the policy drives {len(want)} joints, the robot has {len(names)}")
    if set(names) != set(want):
        missing, extra = sorted(set(want) - set(names)), sorted(set(names) - set(want))
        problems.append(f"joint names: missing on the robot {missing}, unknown to the policy {extra}")
    elif names != want:
        diffs = [f"#{i}: policy '{a}', robot '{b}'" for i, (a, b) in enumerate(zip(want, names, strict=True)) if a != b]
        problems.append(f"joint order differs at {len(diffs)} positions ({'; '.join(diffs[:4])})")
    rates, dt = meta.rates, float(robot.control_dt)
    ratio = rates.policy_dt / dt if dt > 0 else math.inf
    steps = round(ratio)
    if not (steps >= 1 and abs(ratio - steps) <= _RATE_TOL * ratio):
        problems.append(
            f"rates: the robot's control period {dt:g} s does not divide the policy period "
            f"{rates.policy_dt:g} s ({rates.policy_hz:g} Hz); ratio {ratio:.6g}"
        )
    if robot.command_mode == "torque":
        if abs(dt - rates.sim_dt) > _RATE_TOL * rates.sim_dt:
            problems.append(
                f"rates: a torque robot must step at the training physics rate {rates.physics_hz:g} Hz "
                f"(dt {rates.sim_dt:g} s), since the actuator chain counts delay and servo periods in "
                f"physics steps; the robot steps every {dt:g} s"
            )
    elif robot.command_mode != "position":
        problems.append(f"command mode {robot.command_mode!r}: expected 'torque' or 'position'")
    elif dt > 0:
        try:  # the command low-pass runs at the position robot's control period
            check_cutoff(command_filter_hz(meta), dt, "the position robot's control period", "position_filter_hz")
        except ValueError as err:
            problems.append(f"command filter: {err}")
    if robot.imu_body is not None and robot.imu_body != meta.imu_body:
        problems.append(
            f"IMU: the policy reads the IMU of body '{meta.imu_body}', the robot's is on "
            f"'{robot.imu_body}' (rotate its readings into the '{meta.imu_body}' frame)"
        )
    got_hash = robot.description_hash
    if got_hash is not None and got_hash != meta.robot.description_sha256:
        problems.append(
            f"robot description: sha256 {got_hash[:12]}… differs from the training description "
            f"{meta.robot.description_sha256[:12]}… ({meta.robot.description['path']})"
        )
    if problems:
        raise MetadataMismatchError("the exported policy does not match the robot:\n  - " + "\n  - ".join(problems))
    return steps


def command_filter_hz(meta: PolicyMetadata) -> np.ndarray:
    """Command low-pass corner of every joint (``meta.joint_names`` order), Hz; ``inf`` where training ran none."""
    hz = np.full(len(meta.joint_names), math.inf)
    index = {j: i for i, j in enumerate(meta.joint_names)}
    for group in meta.actuator_groups:
        if group.trained_stages.position_filter:
            hz[[index[j] for j in group.joint_names]] = group.joint_params().position_filter_hz
    return hz


class DeployRuntime:
    """Drive ``robot`` with an exported policy at the policy rate (see the module docstring).

    Args:
        meta: Exported metadata.
        robot: The robot (its joint order must equal ``meta.joint_names``).
        policy: Observation → raw action, e.g. the :class:`~realgap.envs.format.verify.OnnxPolicy` of
            :func:`~realgap.envs.format.verify.load_policy` or :class:`ZeroPolicy`; None: no policy runs — the caller
            writes :attr:`q_target` itself (the identification motion), so the observation and action terms are not
            built (a policy whose terms need more than encoders and an IMU, such as the grasp's object pose, can still
            be excited and identified).
        command_delay: Reproduce the training command delay in the chain (default: only for simulated robots).
        seed: Seed of the numpy generator drawing the command delay.

    The chains' optional stages follow the rule of the module docstring (:func:`runtime_stages`): the command
    low-pass wherever training ran it, the drive's physical stages only for ``robot.simulated``.
        log: Record one sample per control period into this recorder (:mod:`realgap.envs.deploy.log`); its gains
            are set to the ones the runtime commands.
        objects: The object's pose for a policy that observes one (the grasp); default: the robot itself when it
            implements :class:`~realgap.envs.deploy.objects.ObjectPose` (the MuJoCo grasp scene).

    Task-space terms (``ee_pose_delta``) run their IK every control period from the measured joints; their gravity
    feed-forward goes into a torque robot's chain, and a position robot must compensate gravity itself
    (``Robot.gravity_compensated``, as the Franka does), else the runtime refuses it.

    Raises:
        MetadataMismatchError: From :func:`check_compatible`.
        UnsupportedObservationError: An observation term cannot be built on a robot.
        UnsupportedActionError: An action term cannot be run on a robot.
    """

    def __init__(
        self,
        meta: PolicyMetadata,
        robot: Robot,
        policy: Policy | None,
        *,
        command_delay: bool | None = None,
        seed: int = 0,
        log: LogRecorder | None = None,
        objects: ObjectPose | None = None,
    ) -> None:
        self.meta, self.robot, self.policy, self.log = meta, robot, policy, log
        self.steps_per_policy = check_compatible(meta, robot)
        obs_dim = getattr(policy, "obs_dim", meta.obs_dim)
        if obs_dim != meta.obs_dim:
            raise MetadataMismatchError(f"the policy takes {obs_dim} inputs, the metadata layout has {meta.obs_dim}")
        # the hand's setpoint speed is the runtime's unless the robot's own hand ramps (a real hand does)
        self.actions = ActionMapper(meta, not robot.hand_ramps, float(robot.control_dt)) if policy is not None else None
        self.observations = None
        if policy is not None:
            objects = objects if objects is not None else (robot if isinstance(robot, ObjectPose) else None)
            extra = task_observation_terms(meta, self.actions.kinematics, objects)
            self.observations = ObservationBuilder(meta, extra_terms=extra)
            gravity = [n for n, t in self.actions.ik.items() if t.gravity]
            if gravity and robot.command_mode == "position" and not robot.gravity_compensated:
                raise MetadataMismatchError(
                    f"action terms {gravity} add the gravity torque g(q), which a position "
                    "robot cannot take: its own controller must compensate gravity "
                    "(Robot.gravity_compensated)"
                )
        index = {j: i for i, j in enumerate(meta.joint_names)}
        self.command_delay = robot.simulated if command_delay is None else command_delay
        rng = np.random.default_rng(seed)
        timing = ChainTiming.from_rates(meta.rates)
        self.chains: list[tuple[np.ndarray, ActuatorChain]] = []
        kp, kd = np.zeros(len(index)), np.zeros(len(index))
        for group in meta.actuator_groups:
            idx = np.array([index[j] for j in group.joint_names], dtype=np.int64)
            kp[idx], kd[idx] = group.kp, group.kd
            if robot.command_mode == "torque":
                # a real bus brings its own latency, a real gearbox its own friction and a real drive its own current
                # loop, speed limit and compliance: model them for simulators only (module docstring)
                delay = group.delay_steps(meta.rates.sim_dt) if self.command_delay else (0, 0)
                chain = ActuatorChain(
                    group.joint_params(),
                    timing,
                    1,
                    delay_steps=delay,
                    generator=rng,
                    apply_friction=group.friction_in_chain and robot.simulated,
                    stages=runtime_stages(group.trained_stages, robot.simulated),
                )
                self.chains.append((idx, chain))
        hz = command_filter_hz(meta)
        self._command_filter: tuple[LowPass, np.ndarray] | None = None
        if robot.command_mode == "position" and np.isfinite(hz).any():  # the torque chains filter it themselves
            self._command_filter = (LowPass(1), lowpass_decay(hz, float(robot.control_dt)))
        self.kp, self.kd = kp, kd
        if log is not None:
            log.kp, log.kd = kp.copy(), kd.copy()
        self._interp = TargetInterpolator(1, self.steps_per_policy, meta.rates.target_mode)
        self._zeros = np.zeros((1, len(index)))
        self._tau = np.zeros(len(index))
        self._tau_ff = np.zeros(len(index))  # feed-forward torque of the task-space terms (g(q)), set every period
        self.policy_time_s = 0.0
        self.control_time_s = 0.0
        self.policy_steps = 0
        self.control_steps = 0
        self.reset()

    def reset(self) -> None:
        """Forget the previous action and the chain state (call when the robot is (re)placed in its start pose)."""
        self.last_action = np.zeros(self.meta.action_dim, dtype=np.float32)
        if self.observations is not None:
            self.observations.reset()
        if self.actions is not None:
            self.actions.reset()
        self.q_target = np.asarray(self.meta.default_joint_pos, dtype=np.float64).copy()
        self._tau_ff[:] = 0.0
        for _, chain in self.chains:
            chain.reset()
        if self._command_filter is not None:
            self._command_filter[0].reset()
        self._interp.reset()

    def act(self) -> np.ndarray:
        """Read the robot, run the policy once and set the joint targets; returns the raw-clipped action ``(A,)``.

        Raises:
            FloatingPointError: The policy produced a non-finite action (nothing is sent).
            RuntimeError: The runtime was built without a policy (``policy=None``).
        """
        if self.policy is None:
            raise RuntimeError(
                "this runtime was built without a policy (policy=None): write q_target and call control()"
            )
        t0 = time.perf_counter()
        readings = Readings(self.robot.read_joints(), self.robot.read_imu(), self.last_action)
        raw = np.asarray(self.policy(self.observations.build(readings)), dtype=np.float32).reshape(-1)
        if not np.isfinite(raw).all():
            raise FloatingPointError(f"the policy returned a non-finite action: {raw}")
        action = self.meta.actions.clip(raw)  # what training's env received, and what last_action observes
        self.last_action = action
        self.actions.apply(action, self.q_target, readings.joints.pos)
        self.policy_time_s += time.perf_counter() - t0
        self.policy_steps += 1
        return action

    def control(self) -> None:
        """One control period: compute and send the command, then advance the robot."""
        t0 = time.perf_counter()
        tracks = self.actions is not None and self.actions.tracks
        if tracks:  # task-space terms: IK from the joints measured now (every physics step on a torque robot)
            self.actions.track(self.robot.read_joints().pos, self.q_target, self._tau_ff)
        target = self.q_target[None, :]
        tau = q_cmd = None
        if self.robot.command_mode == "torque":
            joints = self.robot.read_joints()
            q, qd = joints.pos[None, :], joints.vel[None, :]
            for idx, chain in self.chains:
                ff = self._tau_ff[None, idx] if tracks else None
                out = chain.compute(target[:, idx], self._zeros[:, idx], q[:, idx], qd[:, idx], ff)
                self._tau[idx] = out.tau_applied[0]
            self.robot.send_torques(self._tau)
            tau = self._tau
        else:
            q_cmd = self._interp.step(target)[0]
            if self._command_filter is not None:
                q_cmd = self._command_filter[0].step(q_cmd[None, :], self._command_filter[1])[0]
            self.robot.send_joint_targets(q_cmd, self._zeros[0], self.kp, self.kd)
        self.control_time_s += time.perf_counter() - t0
        self.control_steps += 1
        sample = self._sample(q_cmd) if self.log is not None else None
        self.robot.step()
        if sample is not None:
            tau = tau if self.robot.command_mode == "torque" else self.robot.read_torque()  # what period k applied
            self.log.record(
                sample[0],
                sample[1].pos,
                sample[1].vel,
                tau,
                sample[2].ang_vel_b,
                sample[2].projected_gravity_b,
                self.last_action,
            )

    def _sample(self, q_cmd: np.ndarray | None) -> tuple:
        """This control period's target and readings, taken before the robot steps (outside the timed control work).
        A torque robot logs its target as a position robot is commanded, held/interpolated (its chain interpolates the
        same stream internally)."""
        if q_cmd is None:
            q_cmd = self._interp.step(self.q_target[None, :])[0]
        return q_cmd.copy(), self.robot.read_joints(), self.robot.read_imu()

    def step(self) -> np.ndarray:
        """One policy period: :meth:`act`, then ``steps_per_policy`` × :meth:`control`. Returns the clipped action."""
        action = self.act()
        for _ in range(self.steps_per_policy):
            self.control()
        return action
