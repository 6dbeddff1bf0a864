"""A headless G1 simulator on unitree_sdk2 DDS: MuJoCo C on the export's MJCF behind ``rt/lowcmd`` / ``rt/lowstate``.

    python -m realgap.envs.deploy.drivers.g1_dds_sim --policy configs/policies/balance_g1 --domain 1 --interface lo \
        --push_mps 0.2,0.4 --push_interval_s 3,5 --seed 0

Every physics step (2 ms, 500 Hz) each motor applies the drive law from the latest accepted command,
``tau + kp·(q* − q) + kd·(dq* − dq)``, clamped to the motor's peak torque from the metadata (the datasheet envelope),
and ``rt/lowstate`` is published: motor q/dq/tau_est, IMU quaternion/rpy/gyro/accelerometer of the pelvis, ``tick``
(one per physics step; before the first command, while the robot is held, one per step period of the wall clock),
``mode_machine`` and the CRC. A command whose CRC fails is dropped and counted. Until
the first command arrives the robot is held in the export's start pose (physics paused, state still published), so a
controller can connect. Pushes (the balance task's: a horizontal velocity change of random heading) follow the
seeded schedule of :func:`realgap.envs.deploy.episode.schedules` from ``--settle_s`` after the first command (the
driver's soft start), so a DDS episode and an in-process episode with the same seed meet the same pushes; the range
and interval are the export's balance protocol with ``--push_mps`` / ``--push_interval_s`` (no pushes unless
``--push_mps`` is given). A fall (the protocol's rule: :meth:`~realgap.envs.format.protocol.BalanceProtocol.fell`) is
reported as ``fell_at_s``, simulated time since the first command. Paced against the wall clock by absolute deadlines.

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
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from realgap.envs.deploy.drivers.g1_dds import LOWCMD_TOPIC, LOWSTATE_TOPIC, LowStateCrc, motor_indices

PHYSICS_DT = 0.002
MODE_PR = 0  # LowCmd_.mode_pr: 0 = ankle pitch/roll joints; 1 = AB (parallel motors, not modeled)
MODE_MACHINE = 5  # the value a G1 29-DoF reports; the driver must echo whatever it reads


def run(args: argparse.Namespace, make_hidden: Callable | None = None) -> dict:
    """Run the simulator until ``--duration_s`` of simulated time after the first command (or forever).

    ``make_hidden(meta)`` builds the hidden robot (``--hidden_seed``; the command line passes it, because the hidden
    robot is identification's rig, a layer above the deploy drivers): its drives replace the drive law above.
    """
    import mujoco
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
    from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowState_
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
    from unitree_sdk2py.utils.crc import CRC

    from realgap.envs.deploy.episode import schedules
    from realgap.envs.deploy.flags import protocol_from_flags
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.format import load_policy

    meta, _ = load_policy(args.policy)
    hidden = make_hidden is not None
    if hidden:
        robot = make_hidden(meta)
        plant, dt = robot.sim, robot.control_dt
    else:
        robot = plant = MujocoRobot.for_policy(meta, physics_dt=args.physics_dt)
        dt = args.physics_dt
    unitree = args.bridge == "unitree"
    robot.reset()
    slots = motor_indices(robot.joint_names)
    peak = np.zeros(len(slots))
    index = {n: i for i, n in enumerate(robot.joint_names)}
    for g in meta.actuator_groups:
        for j, n in enumerate(g.joint_names):
            peak[index[n]] = g.peak_torque[j]
    horizon = args.duration_s if args.duration_s > 0 else 3600.0
    # the simulator pushes only when asked: its base protocol is the export's without pushes
    protocol = protocol_from_flags(args, meta.balance_protocol.with_changes(push_mps=(0.0, 0.0)), horizon)
    if hidden and protocol.pushes:
        raise ValueError("--hidden_seed welds the base (identification): pushes need --push_mps 0,0")
    pushes = list(schedules(1, protocol, args.seed)[0])
    crc, state_crc = CRC(), LowStateCrc()
    latest: dict = {}
    counts = {
        "commands": 0,
        "crc_failures": 0,
        "pushes": 0,
        "lockstep_stalls": 0,
        "skipped": 0,
        "commands_while_held": 0,
        "ab_commands_refused": 0,
    }
    new_cmd = threading.Event()
    applied: list[tuple[int, float, int, float]] = []  # (seq, received s, tick reflecting it, applied s)

    def on_cmd(msg: LowCmd_) -> None:
        t = time.monotonic()
        if crc.Crc(msg) != msg.crc:
            counts["crc_failures"] += 1
            return
        if service is not None and service.mode:  # the high-level service holds the motors
            counts["commands_while_held"] += 1
            return
        if msg.mode_pr != MODE_PR:
            if counts["ab_commands_refused"] == 0:
                print("[g1_dds_sim] a command in AB ankle mode (mode_pr 1): not modeled, dropped", flush=True)
            counts["ab_commands_refused"] += 1
            return
        counts["commands"] += 1
        latest["cmd"], latest["t"] = msg, t
        new_cmd.set()

    ChannelFactoryInitialize(args.domain, args.interface)
    service = None
    if not unitree:  # Unitree's bridge serves no motion switcher
        from realgap.envs.deploy.drivers.g1_motion_switcher import make_service

        service = make_service(args.motion_mode)
        service.Init()
        service.Start()
    pub = ChannelPublisher(LOWSTATE_TOPIC, LowState_)
    pub.Init()
    sub = ChannelSubscriber(LOWCMD_TOPIC, LowCmd_)
    sub.Init(on_cmd, 10)
    state = unitree_hg_msg_dds__LowState_()
    state.mode_machine = 0 if unitree else MODE_MACHINE
    held_tau, held_seq = None, None  # --bridge unitree: the torque computed once, and the command it was computed for
    n = len(slots)
    q_t, dq_t, kp, kd, ff = (np.zeros(n) for _ in range(5))
    tau = np.zeros(n)
    v_prev = np.zeros(3)
    tick, t_run, fell_at, last_seq, fault_done = 0, None, None, None, False
    imu_body = plant.model.body(plant.imu_body).id
    where = f"hidden drives ({args.hidden_drives}, seed {args.hidden_seed}), base welded" if hidden else "free base"
    print(
        f"[g1_dds_sim] {plant.mjcf_path}: {where}; domain {args.domain} on {args.interface}, tick {dt * 1e3:g} ms"
        f"{', lockstep' if args.lockstep else ''}, {len(pushes)} pushes scheduled, bridge {args.bridge}"
        f"{f', motion mode {args.motion_mode!r} held' if args.motion_mode else ''}",
        flush=True,
    )
    deadline = wall0 = time.perf_counter()
    try:
        while True:
            if args.lockstep and t_run is None:  # held: the clock stands until the first command, taken at once
                new_cmd.wait(dt)
            elif args.lockstep and not new_cmd.wait(args.lockstep_wait_s):
                if time.monotonic() - latest["t"] > 1.0:
                    break  # the controller is gone
                # the robot's clock waits for the controller: a step on the held command would put a physics step
                # into the log that no logged command matches (a stalled process on a loaded machine is not the
                # drives' delay)
                counts["lockstep_stalls"] += 1
                continue
            new_cmd.clear()
            cmd = latest.get("cmd")
            if cmd is not None:
                if t_run is None:
                    t_run = 0.0
                if cmd.reserve[0] != last_seq:
                    if last_seq is not None and cmd.reserve[0] != last_seq + 1:
                        counts["skipped"] += (int(cmd.reserve[0]) - int(last_seq) - 1) % 2**32
                    last_seq = cmd.reserve[0]
                    applied.append((int(last_seq), latest["t"], tick + 1, time.monotonic()))
                mc = cmd.motor_cmd
                for i, s in enumerate(slots):
                    m = mc[s]
                    on = m.mode == 1
                    q_t[i], dq_t[i], ff[i] = m.q, m.dq, m.tau if on else 0.0
                    kp[i], kd[i] = (m.kp, m.kd) if on else (0.0, 0.0)
                if hidden:  # the hidden robot's own drive law (delay, realized gains, derated limit)
                    robot.send_joint_targets(q_t, dq_t, kp, kd)
                    robot.step()
                    tau = robot.read_torque()
                else:
                    if not unitree or held_seq is not cmd:  # the default: every step; unitree: once per command, held
                        js = robot.read_joints()
                        tau = np.clip(ff + kp * (q_t - js.pos) + kd * (dq_t - js.vel), -peak, peak)
                        if not np.isfinite(tau).all():
                            tau = np.zeros(n)
                        held_tau, held_seq = tau, cmd
                    tau = held_tau
                    while pushes and pushes[0].time_s + args.settle_s <= t_run + 1e-9:
                        robot.push(pushes.pop(0).dv_xy)
                        counts["pushes"] += 1
                    robot.send_torques(tau)
                    robot.step()
                t_run += dt
                if fell_at is None and protocol.fell(robot.root_height(), robot.tilt()):
                    fell_at = t_run
                    print(
                        f"[g1_dds_sim] fall at {t_run:.3f} s: root height {robot.root_height():.3f} m, tilt "
                        f"{robot.tilt():.2f} rad",
                        flush=True,
                    )
            if cmd is not None:
                tick += 1
            elif not args.lockstep:  # held: the robot's clock is the wall clock (a late step skips ticks, as a robot's
                # tick would), so a driver measures the tick period, not this host's load (measured: 4.7-6.4 ms per
                # 2 ms tick at connect on a loaded 2-core host when it counted steps)
                tick = max(tick + 1, int((time.perf_counter() - wall0) / dt))
            d = plant.data
            js = robot.read_joints()
            for i, s in enumerate(slots):
                ms = state.motor_state[s]
                ms.q, ms.dq, ms.tau_est, ms.mode = float(js.pos[i]), float(js.vel[i]), float(tau[i]), 1
            quat = d.xquat[imu_body].copy()
            imu = state.imu_state
            imu.quaternion = [float(v) for v in quat]
            if not unitree:  # roll, pitch, yaw (ZYX) as a robot reports them; Unitree's bridge leaves them 0
                w, x, y, z = (float(v) for v in quat)
                imu.rpy = [
                    float(np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))),
                    float(np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))),
                    float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))),
                ]
            imu.gyroscope = [float(v) for v in plant.read_imu().ang_vel_b]
            v = d.qvel[0:3].copy() if plant.floating else np.zeros(3)
            a_w = (v - v_prev) / dt + np.array([0.0, 0.0, 9.81]) if t_run else np.array([0.0, 0.0, 9.81])
            v_prev = v
            rot = np.empty(9)
            mujoco.mju_quat2Mat(rot, quat)
            imu.accelerometer = [float(x) for x in rot.reshape(3, 3).T @ a_w]
            faulty = args.fault is not None and t_run is not None and t_run >= args.fault_at_s - 1e-9
            if faulty and args.fault in ("tick_back", "tick_jump") and not fault_done:
                tick += -100 if args.fault == "tick_back" else 10_000
                fault_done = True
            if faulty and args.fault == "quat":
                imu.quaternion = [0.0, 0.0, 0.0, 0.0]
            state.tick = 0 if unitree else tick & 0xFFFFFFFF
            state.crc = 0 if unitree else state_crc(state)
            if faulty and args.fault == "crc":
                state.crc ^= 0x1
            pub.Write(state)
            if t_run is not None and args.duration_s > 0 and t_run >= args.duration_s - 1e-9:
                break
            if args.lockstep:
                continue
            deadline += dt
            if t_run is None:  # held: no steps to catch up (the tick follows the wall clock, above)
                deadline = max(deadline, time.perf_counter())
            # sleep even when late (0 s): it releases the GIL, so the DDS reader thread takes a command now rather than
            # after Python's 5 ms switch interval (a simulator behind real time would otherwise read commands late)
            time.sleep(max(deadline - time.perf_counter(), 0.0))
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (the command line maps it): stop, and report below
        print("[g1_dds_sim] interrupted: stopping", flush=True)
    if service is not None:
        counts["motion_switcher_calls"] = {str(k): v for k, v in sorted(service.calls.items())}
        counts["motion_mode_at_end"] = service.mode
    last = latest.get("cmd")
    gains = [(last.motor_cmd[s].kp, last.motor_cmd[s].kd) for s in slots] if last is not None else [(0.0, 0.0)]
    result = {**counts, "ticks": tick, "sim_time_s": t_run or 0.0, "fell_at_s": fell_at,
              "last_kp_max": max(g[0] for g in gains), "last_kd_min": min(g[1] for g in gains)}  # fmt: skip
    print(f"[g1_dds_sim] done: {json.dumps(result)}", flush=True)
    if args.report:
        Path(args.report).write_text(json.dumps(result))
    if args.timing_log:
        a = np.array(applied, dtype=float).reshape(-1, 4)
        np.savez(args.timing_log, seq=a[:, 0].astype(np.int64), received_s=a[:, 1], tick=a[:, 2].astype(np.int64),
                 applied_s=a[:, 3])  # fmt: skip
    return result
