"""A headless G1 simulator on unitree_sdk2 DDS: MuJoCo C on the export's MJCF behind ``rt/lowcmd`` / ``rt/lowstate``.

    python -m realgap.envs.deploy.drivers.g1_dds_sim --policy configs/policies/balance_g1 --domain 1 --interface lo \
        --push_mps 0.2,0.4 --push_interval_s 3,5 --seed 0

Every physics step (2 ms, 500 Hz) each motor applies the drive law from the latest accepted command,
``tau + kp·(q* − q) + kd·(dq* − dq)`` (the one PD law, :func:`~realgap.actuators.models.pd_torque`), clamped to the
motor's peak torque from the metadata (the datasheet envelope), and ``rt/lowstate`` is published: motor q/dq/tau_est,
IMU quaternion/rpy/gyro/accelerometer of the pelvis, ``tick`` (one per physics step; before the first command, while
the robot is held, one per step period of the wall clock), ``mode_machine`` and the CRC. A command whose CRC fails
is dropped and counted. Until the first command arrives the robot is held in the export's start pose (physics
paused, state still published), so a controller can connect. Pushes (the balance task's: a horizontal velocity
change of random heading) follow the seeded schedule of :func:`realgap.envs.deploy.episode.schedules` from
``--settle_s`` after the first command (the driver's soft start), so a DDS episode and an in-process episode with
the same seed meet the same pushes; the range and interval are the export's balance protocol with ``--push_mps`` /
``--push_interval_s`` (no pushes unless ``--push_mps`` is given). A fall (the protocol's rule:
:meth:`~realgap.envs.format.protocol.BalanceProtocol.fell`) is reported as ``fell_at_s``, simulated time since the
first command. Paced against the wall clock by absolute deadlines.

``--hidden_seed N [--hidden_drives default|worn]`` simulates the hidden robot of ``--robot hidden`` instead
(:class:`~realgap.envs.deploy.hidden_robot.HiddenRobot`, the same truth for a seed and its own drive law: delay,
realized gains, derated torque limit; friction and armature in the plant), base welded ``--hang_m`` above the start
pose (identification: ``--robot unitree_g1 --excite``). Its physics step is the export's (5 ms for balance_g1), so one
``tick`` is 5 ms: run the driver with ``--tick_period_s 0.005``. ``tau_est`` is the torque its drives applied. Hidden
drives take position commands (``MotorCmd_.tau`` is ignored; the driver sends 0); pushes need the free base.

``--lockstep`` steps once per new command instead of on the wall clock (never on a held one: a wait longer than
``--lockstep_wait_s`` is counted in ``lockstep_stalls`` and waited out), and ends 1 s (wall) after the last command:
the robot's clock follows the controller, so a log over DDS has the drives' delay and nothing of the machine's
scheduling (why: a loaded machine otherwise adds a varying tick of bridge latency, which identification would fold
into the delay). Before the first command the held state is published with ``tick`` standing still: a held tick
that arrived after the driver's first command counted, for the driver, as that command's step, so two commands were
in flight and the simulator took only the newer (commands skipped, some inside the logged motion, more of them under
SCHED_FIFO). The driver's watchdog therefore has to outlast its own start (connect to first command; the
identification command gives 1 s). ``skipped`` in the report counts sequence numbers never applied (with
``--lockstep``: only the damping that ends a run, which the driver sends unpaced).

``--bridge unitree`` behaves like Unitree's own MuJoCo bridge (``unitree_mujoco``'s ``simulate_python``, read and
run here): ``tick``, the state CRC and ``mode_machine`` left 0, no motion switcher served, and each command's PD
torque computed once, at the first physics step after it arrives, and held until the next command (where the
default, like a real drive, recomputes it every step). ``--physics_dt`` sets the step (Unitree's default: 5 ms).
A driver rehearses against both behaviours (tests/slow/test_g1_dds_unitree.py).

The motion switcher (:mod:`~realgap.envs.deploy.drivers.g1_motion_switcher`) is served as on a real G1:
``--motion_mode NAME`` starts with a high-level service holding the robot (a real G1 boots with one), and low-level
commands are dropped (counted: ``commands_while_held``) until a client releases it. Commands in AB ankle mode
(``mode_pr`` 1: the ankles' parallel motors, which the MJCF does not model) are dropped and counted
(``ab_commands_refused``): the robot keeps the last PR command.

The run ends ``--duration_s`` of simulated time after the first applied command (0: never; with ``--lockstep`` also
1 s after the controller's last command), or on Ctrl-C / SIGTERM; the report (``--report``: counts, fall time, the
last command's gains) is written then, in every case.

``--fault KIND --fault_at_s T`` corrupts the published state from ``T`` s of simulated time after the first
command, to test a driver's safety on bad state over the real protocol: ``crc`` (every state's CRC wrong from then
on), ``quat`` (an all-zero IMU quaternion from then on), ``tick_back`` (the tick steps back 100 once),
``tick_jump`` (the tick jumps 10,000 ahead once).

``--timing_log FILE`` (npz) records, per applied command, its sequence number (``LowCmd_.reserve[0]``), the receive
time, the ``tick`` of the first LowState that reflects it and the time it was applied, all on ``CLOCK_MONOTONIC``
(shared by the processes of one machine): with the driver's send times this gives command-to-state latency
(:mod:`realgap.envs.deploy.drivers.latency`).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from realgap.actuators.models import clip_box, pd_torque
from realgap.envs.deploy.drivers.g1_dds import LOWCMD_TOPIC, LOWSTATE_TOPIC, LowStateCrc, motor_indices
from realgap.envs.deploy.drivers.g1_motion_switcher import make_service
from realgap.envs.deploy.flags import protocol_from_flags
from realgap.envs.format import load_policy

PHYSICS_DT = 0.002
MODE_PR = 0  # LowCmd_.mode_pr: 0 = ankle pitch/roll joints; 1 = AB (parallel motors, not modeled)
MODE_MACHINE = 5  # the value a G1 29-DoF reports; the driver must echo whatever it reads
COUNTS = (
    "commands",
    "crc_failures",
    "pushes",
    "lockstep_stalls",
    "skipped",
    "commands_while_held",
    "ab_commands_refused",
)
"""The report's counters, in its order."""
AT_REST_ACCEL_W = np.array([0.0, 0.0, 9.81])
"""What an accelerometer at rest reads (the specific force: minus gravity), in the world, m/s²."""


def command(policy: str | Path, domain: int, **flags: object) -> list[str]:
    """The command line that starts this simulator in a process of its own: ``--policy`` and ``--domain``, then each
    of ``flags`` as ``--name value`` (``True``: the bare switch; ``False`` / ``None``: left out)."""
    argv = [sys.executable, "-m", __name__, "--policy", str(policy), "--domain", str(domain)]
    for name, value in flags.items():
        if value is True:
            argv.append(f"--{name}")
        elif value is not False and value is not None:
            argv += [f"--{name}", str(value)]
    return argv


def run(args: argparse.Namespace, make_hidden: Callable | None = None) -> dict:
    """Run the simulator until ``--duration_s`` of simulated time after the first command (or forever).

    ``make_hidden(meta)`` builds the hidden robot (``--hidden_seed``; the command line passes it, because the hidden
    robot is identification's rig, a layer above the deploy drivers): its drives replace the drive law above.

    Returns:
        The report: the counters of :data:`COUNTS`, ticks, simulated time, fall time and the last command's gains.
    """
    sim = _DdsSim(args, make_hidden)
    sim.open_endpoints()
    try:
        sim.loop()
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (the command line maps it): stop, and report below
        print("[g1_dds_sim] interrupted: stopping", flush=True)
    return sim.report()


class _DdsSim:
    """One run: the simulated robot, the DDS endpoints and the loop's state.

    Args:
        args: The command line (:mod:`realgap.envs.deploy.drivers.g1_dds_sim.__main__`).
        make_hidden: Builds the hidden robot from the metadata (``None``: the export's robot, free base).
    """

    def __init__(self, args: argparse.Namespace, make_hidden: Callable | None) -> None:
        from realgap.envs.deploy.episode import schedules
        from realgap.envs.deploy.mujoco_robot import MujocoRobot

        self.args = args
        meta, _ = load_policy(args.policy)
        self.hidden = make_hidden is not None
        if self.hidden:
            self.robot = make_hidden(meta)
            self.plant, self.dt = self.robot.sim, self.robot.control_dt
        else:
            self.robot = self.plant = MujocoRobot.for_policy(meta, physics_dt=args.physics_dt)
            self.dt = args.physics_dt
        self.unitree = args.bridge == "unitree"
        self.robot.reset()
        self.slots = motor_indices(self.robot.joint_names)
        self.peak = meta.joint_array("peak_torque", self.robot.joint_names)  # N·m, by name
        horizon = args.duration_s if args.duration_s > 0 else 3600.0
        # the simulator pushes only when asked: its base protocol is the export's without pushes
        self.protocol = protocol_from_flags(args, meta.balance_protocol.with_changes(push_mps=(0.0, 0.0)), horizon)
        if self.hidden and self.protocol.pushes:
            raise ValueError("--hidden_seed welds the base (identification): pushes need --push_mps 0,0")
        self.pushes = list(schedules(1, self.protocol, args.seed)[0])
        self.counts: dict[str, Any] = dict.fromkeys(COUNTS, 0)
        self.latest: dict = {}
        self.new_cmd = threading.Event()
        self.applied: list[tuple[int, float, int, float]] = []  # (seq, received s, tick reflecting it, applied s)
        self.service = None  # the motion switcher (not served with --bridge unitree)
        n = len(self.slots)
        self.q_t, self.dq_t, self.kp, self.kd, self.ff, self.tau = (np.zeros(n) for _ in range(6))
        self.held_tau, self.held_seq = None, None  # --bridge unitree: the torque computed once, and its command
        self.v_prev = np.zeros(3)
        self.tick, self.t_run, self.fell_at, self.last_seq, self.fault_done = 0, None, None, None, False
        self.imu_body = self.plant.model.body(self.plant.imu_body).id

    def open_endpoints(self) -> None:
        """Join the DDS domain: the motion switcher (unless ``--bridge unitree``), ``rt/lowstate``, ``rt/lowcmd``."""
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
        from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowState_
        from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
        from unitree_sdk2py.utils.crc import CRC

        args = self.args
        self.crc, self.state_crc = CRC(), LowStateCrc()
        ChannelFactoryInitialize(args.domain, args.interface)
        if not self.unitree:  # Unitree's bridge serves no motion switcher
            self.service = make_service(args.motion_mode)
            self.service.Init()
            self.service.Start()
        self.pub = ChannelPublisher(LOWSTATE_TOPIC, LowState_)
        self.pub.Init()
        self.sub = ChannelSubscriber(LOWCMD_TOPIC, LowCmd_)
        self.sub.Init(self.on_cmd, 10)
        self.state = unitree_hg_msg_dds__LowState_()
        self.state.mode_machine = 0 if self.unitree else MODE_MACHINE

    def on_cmd(self, msg: Any) -> None:
        """DDS reader thread: keep a ``LowCmd_`` whose CRC holds, unless the motors are held or it is in AB mode."""
        t = time.monotonic()
        counts = self.counts
        if self.crc.Crc(msg) != msg.crc:
            counts["crc_failures"] += 1
            return
        if self.service is not None and self.service.mode:  # the high-level service holds the motors
            counts["commands_while_held"] += 1
            return
        if msg.mode_pr != MODE_PR:
            if counts["ab_commands_refused"] == 0:
                print("[g1_dds_sim] a command in AB ankle mode (mode_pr 1): not modeled, dropped", flush=True)
            counts["ab_commands_refused"] += 1
            return
        counts["commands"] += 1
        self.latest["cmd"], self.latest["t"] = msg, t
        self.new_cmd.set()

    def loop(self) -> None:
        """Step, publish and pace until the run's end (``--duration_s``, or the controller gone under lockstep)."""
        args, plant = self.args, self.plant
        dt_ms, where = self.dt * 1e3, "free base"
        if self.hidden:
            where = f"hidden drives ({args.hidden_drives}, seed {args.hidden_seed}), base welded"
        print(
            f"[g1_dds_sim] {plant.mjcf_path}: {where}; domain {args.domain} on {args.interface}, tick {dt_ms:g} ms"
            f"{', lockstep' if args.lockstep else ''}, {len(self.pushes)} pushes scheduled, bridge {args.bridge}"
            f"{f', motion mode {args.motion_mode!r} held' if args.motion_mode else ''}",
            flush=True,
        )
        self.deadline = self.wall0 = time.perf_counter()
        while True:
            wait = self.wait()
            if wait == "stop":
                break
            if wait == "stall":
                continue
            self.new_cmd.clear()
            cmd = self.latest.get("cmd")
            if cmd is not None:
                self.step(cmd)
            self.advance_tick(cmd)
            self.publish()
            if self.t_run is not None and args.duration_s > 0 and self.t_run >= args.duration_s - 1e-9:
                break
            if not args.lockstep:
                self.pace()

    def wait(self) -> str:
        """With ``--lockstep``, wait for a new command: ``"go"``, ``"stall"`` (none in time) or ``"stop"`` (the
        controller gone); without it, ``"go"`` at once (the wall clock paces, :meth:`pace`)."""
        args = self.args
        if args.lockstep and self.t_run is None:  # held: the clock stands until the first command, taken at once
            self.new_cmd.wait(self.dt)
        elif args.lockstep and not self.new_cmd.wait(args.lockstep_wait_s):
            if time.monotonic() - self.latest["t"] > 1.0:
                return "stop"  # the controller is gone
            # the robot's clock waits for the controller: a step on the held command would put a physics step
            # into the log that no logged command matches (a stalled process on a loaded machine is not the
            # drives' delay)
            self.counts["lockstep_stalls"] += 1
            return "stall"
        return "go"

    def step(self, cmd: Any) -> None:
        """One physics step on the latest command: its sequence number, the drive law (or the hidden robot's own
        drives: delay, realized gains, derated limit), the pushes due, the fall check."""
        if self.t_run is None:
            self.t_run = 0.0
        self.note_sequence(cmd)
        self.decode(cmd)
        robot = self.robot
        if self.hidden:
            robot.send_joint_targets(self.q_t, self.dq_t, self.kp, self.kd)
            robot.step()
            self.tau = robot.read_torque()
        else:
            if not self.unitree or self.held_seq is not cmd:  # the default: every step; unitree: once per command
                js = robot.read_joints()
                tau = clip_box(pd_torque(self.q_t, self.dq_t, js.pos, js.vel, self.kp, self.kd, self.ff), self.peak)
                if not np.isfinite(tau).all():
                    tau = np.zeros(len(self.slots))
                self.held_tau, self.held_seq = tau, cmd
            self.tau = self.held_tau
            self.apply_pushes()
            robot.send_torques(self.tau)
            robot.step()
        self.t_run += self.dt
        if self.fell_at is None and self.protocol.fell(robot.root_height(), robot.tilt()):
            self.fell_at = self.t_run
            print(
                f"[g1_dds_sim] fall at {self.t_run:.3f} s: root height {robot.root_height():.3f} m, tilt "
                f"{robot.tilt():.2f} rad",
                flush=True,
            )

    def note_sequence(self, cmd: Any) -> None:
        """Count sequence numbers never applied and record a new command's timing (``--timing_log``)."""
        seq = cmd.reserve[0]
        if seq == self.last_seq:
            return
        if self.last_seq is not None and seq != self.last_seq + 1:
            self.counts["skipped"] += (int(seq) - int(self.last_seq) - 1) % 2**32
        self.last_seq = seq
        self.applied.append((int(seq), self.latest["t"], self.tick + 1, time.monotonic()))

    def decode(self, cmd: Any) -> None:
        """The command's per-motor targets, gains and feed-forward; a motor not enabled (``mode`` 0) gets none."""
        mc = cmd.motor_cmd
        for i, s in enumerate(self.slots):
            m = mc[s]
            on = m.mode == 1
            self.q_t[i], self.dq_t[i], self.ff[i] = m.q, m.dq, m.tau if on else 0.0
            self.kp[i], self.kd[i] = (m.kp, m.kd) if on else (0.0, 0.0)

    def apply_pushes(self) -> None:
        """The pushes due by now (their schedule starts ``--settle_s`` after the first command)."""
        while self.pushes and self.pushes[0].time_s + self.args.settle_s <= self.t_run + 1e-9:
            self.robot.push(self.pushes.pop(0).dv_xy)
            self.counts["pushes"] += 1

    def advance_tick(self, cmd: Any) -> None:
        """One tick per physics step once commanded; while held (and not lockstep) the wall clock's tick."""
        if cmd is not None:
            self.tick += 1
        elif not self.args.lockstep:  # held: the robot's clock is the wall clock (a late step skips ticks, as a
            # robot's tick would), so a driver measures the tick period, not this host's load (measured: 4.7-6.4 ms
            # per 2 ms tick at connect on a loaded 2-core host when it counted steps)
            self.tick = max(self.tick + 1, int((time.perf_counter() - self.wall0) / self.dt))

    def publish(self) -> None:
        """Write ``rt/lowstate``: motor states, the IMU, then the faults asked for, the tick and the CRC."""
        js = self.robot.read_joints()
        state = self.state
        for i, s in enumerate(self.slots):
            ms = state.motor_state[s]
            ms.q, ms.dq, ms.tau_est, ms.mode = float(js.pos[i]), float(js.vel[i]), float(self.tau[i]), 1
        self.write_imu()
        args = self.args
        faulty = args.fault is not None and self.t_run is not None and self.t_run >= args.fault_at_s - 1e-9
        if faulty and args.fault in ("tick_back", "tick_jump") and not self.fault_done:
            self.tick += -100 if args.fault == "tick_back" else 10_000
            self.fault_done = True
        if faulty and args.fault == "quat":
            state.imu_state.quaternion = [0.0, 0.0, 0.0, 0.0]
        state.tick = 0 if self.unitree else self.tick & 0xFFFFFFFF
        state.crc = 0 if self.unitree else self.state_crc(state)
        if faulty and args.fault == "crc":
            state.crc ^= 0x1
        self.pub.Write(state)

    def write_imu(self) -> None:
        """The pelvis IMU: quaternion (w, x, y, z), roll-pitch-yaw, gyroscope, accelerometer (specific force, body)."""
        import mujoco

        d = self.plant.data
        quat = d.xquat[self.imu_body].copy()
        imu = self.state.imu_state
        imu.quaternion = [float(v) for v in quat]
        if not self.unitree:  # roll, pitch, yaw (ZYX) as a robot reports them; Unitree's bridge leaves them 0
            w, x, y, z = (float(v) for v in quat)
            imu.rpy = [
                float(np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))),
                float(np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))),
                float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))),
            ]
        imu.gyroscope = [float(v) for v in self.plant.read_imu().ang_vel_b]
        v = d.qvel[0:3].copy() if self.plant.floating else np.zeros(3)
        a_w = (v - self.v_prev) / self.dt + AT_REST_ACCEL_W if self.t_run else AT_REST_ACCEL_W.copy()
        self.v_prev = v
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, quat)
        imu.accelerometer = [float(x) for x in rot.reshape(3, 3).T @ a_w]

    def pace(self) -> None:
        """Sleep to the next absolute deadline (held: no steps to catch up; the tick follows the wall clock)."""
        self.deadline += self.dt
        if self.t_run is None:
            self.deadline = max(self.deadline, time.perf_counter())
        # sleep even when late (0 s): it releases the GIL, so the DDS reader thread takes a command now rather than
        # after Python's 5 ms switch interval (a simulator behind real time would otherwise read commands late)
        time.sleep(max(self.deadline - time.perf_counter(), 0.0))

    def report(self) -> dict:
        """Print the report, write it (``--report``) and the timing log (``--timing_log``); return it."""
        counts, args = self.counts, self.args
        if self.service is not None:
            counts["motion_switcher_calls"] = {str(k): v for k, v in sorted(self.service.calls.items())}
            counts["motion_mode_at_end"] = self.service.mode
        last = self.latest.get("cmd")
        gains = [(0.0, 0.0)]
        if last is not None:
            gains = [(last.motor_cmd[s].kp, last.motor_cmd[s].kd) for s in self.slots]
        result = {**counts, "ticks": self.tick, "sim_time_s": self.t_run or 0.0, "fell_at_s": self.fell_at}
        result |= {"last_kp_max": max(g[0] for g in gains), "last_kd_min": min(g[1] for g in gains)}
        print(f"[g1_dds_sim] done: {json.dumps(result)}", flush=True)
        if args.report:
            Path(args.report).write_text(json.dumps(result))
        if args.timing_log:
            a = np.array(self.applied, dtype=float).reshape(-1, 4)
            seq, tick = a[:, 0].astype(np.int64), a[:, 2].astype(np.int64)
            np.savez(args.timing_log, seq=seq, received_s=a[:, 1], tick=tick, applied_s=a[:, 3])
        return result
