"""A headless G1 simulator on unitree_sdk2 DDS: MuJoCo C on the export's MJCF behind ``rt/lowcmd`` / ``rt/lowstate``.

    python -m realgap.envs.deploy.drivers.g1_dds_sim --policy configs/policies/balance_g1 --domain 1 --interface lo \
        --push_mps 0.2,0.4 --push_interval_s 3,5 --seed 0

Every physics step (2 ms, 500 Hz) each motor applies the drive law from the latest accepted command,
``tau + kp·(q* − q) + kd·(dq* − dq)``, clamped to the motor's peak torque from the metadata (the datasheet envelope),
and ``rt/lowstate`` is published: motor q/dq/tau_est, IMU quaternion/gyro/accelerometer of the pelvis, ``tick``
(physics steps since start), ``mode_machine`` and the CRC. A command whose CRC fails is dropped and counted. Until
the first command arrives the robot is held in the export's start pose (physics paused, state still published), so a
controller can connect. Pushes (the balance task's: a horizontal velocity change of random heading) follow the
seeded schedule of :func:`realgap.envs.deploy.sim2sim.schedules` from ``--settle_s`` after the first command (the
driver's soft start), so a DDS episode and an in-process episode with the same seed meet the same pushes. A fall
(root below 0.45 m or tilted beyond 1 rad: the balance task's) is reported as ``fell_at_s``, simulated time since the
first command. Paced against the wall clock by absolute deadlines.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from realgap.envs.deploy.drivers.g1_dds import LOWCMD_TOPIC, LOWSTATE_TOPIC, motor_indices

PHYSICS_DT = 0.002
MODE_MACHINE = 5  # the value a G1 29-DoF reports; the driver must echo whatever it reads


def _finite_pair(text: str, name: str) -> tuple[float, float]:
    try:
        lo, hi = (float(p) for p in text.split(","))
    except ValueError:
        raise ValueError(f"--{name} takes LO,HI, got {text!r}") from None
    if not (np.isfinite([lo, hi]).all() and 0 <= lo <= hi):
        raise ValueError(f"--{name} needs finite 0 <= LO <= HI, got {text!r}")
    return lo, hi


def run(args: argparse.Namespace) -> dict:
    """Run the simulator until ``--duration_s`` of simulated time after the first command (or forever)."""
    import mujoco
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
    from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowState_
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
    from unitree_sdk2py.utils.crc import CRC

    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.sim2sim import schedules
    from realgap.envs.format import load_policy

    meta, _ = load_policy(args.policy)
    robot = MujocoRobot.for_policy(meta, physics_dt=PHYSICS_DT)
    robot.reset()
    slots = motor_indices(robot.joint_names)
    peak = np.zeros(len(slots))
    index = {n: i for i, n in enumerate(robot.joint_names)}
    for g in meta.actuator_groups:
        for j, n in enumerate(g.joint_names):
            peak[index[n]] = g.peak_torque[j]
    push_mps, interval = _finite_pair(args.push_mps, "push_mps"), _finite_pair(args.push_interval_s, "push_interval_s")
    horizon = args.duration_s if args.duration_s > 0 else 3600.0
    pushes = list(schedules(1, horizon, push_mps, interval, args.seed)[0]) if push_mps[1] > 0 else []
    crc = CRC()
    latest: dict = {}
    counts = {"commands": 0, "crc_failures": 0, "pushes": 0}

    def on_cmd(msg: LowCmd_) -> None:
        if crc.Crc(msg) != msg.crc:
            counts["crc_failures"] += 1
            return
        counts["commands"] += 1
        latest["cmd"] = msg

    ChannelFactoryInitialize(args.domain, args.interface)
    pub = ChannelPublisher(LOWSTATE_TOPIC, LowState_)
    pub.Init()
    sub = ChannelSubscriber(LOWCMD_TOPIC, LowCmd_)
    sub.Init(on_cmd, 10)
    state = unitree_hg_msg_dds__LowState_()
    state.mode_machine = MODE_MACHINE
    n = len(slots)
    q_t, dq_t, kp, kd, ff = (np.zeros(n) for _ in range(5))
    tau = np.zeros(n)
    v_prev = np.zeros(3)
    tick, t_run, fell_at = 0, None, None
    print(f"[g1_dds_sim] {robot.mjcf_path}: domain {args.domain} on {args.interface}, {1 / PHYSICS_DT:g} Hz, "
          f"{len(pushes)} pushes scheduled", flush=True)  # fmt: skip
    deadline = time.perf_counter()
    while True:
        cmd = latest.get("cmd")
        if cmd is not None:
            if t_run is None:
                t_run = 0.0
            mc = cmd.motor_cmd
            for i, s in enumerate(slots):
                m = mc[s]
                on = m.mode == 1
                q_t[i], dq_t[i], ff[i] = m.q, m.dq, m.tau if on else 0.0
                kp[i], kd[i] = (m.kp, m.kd) if on else (0.0, 0.0)
            js = robot.read_joints()
            tau = np.clip(ff + kp * (q_t - js.pos) + kd * (dq_t - js.vel), -peak, peak)
            if not np.isfinite(tau).all():
                tau = np.zeros(n)
            while pushes and pushes[0].time_s + args.settle_s <= t_run + 1e-9:
                robot.push(pushes.pop(0).dv_xy)
                counts["pushes"] += 1
            robot.send_torques(tau)
            robot.step()
            t_run += PHYSICS_DT
            if fell_at is None and (robot.tilt() > 1.0 or robot.root_height() < 0.45):
                fell_at = t_run
                print(f"[g1_dds_sim] fall at {t_run:.3f} s: root height {robot.root_height():.3f} m, tilt "
                      f"{robot.tilt():.2f} rad", flush=True)  # fmt: skip
        tick += 1
        d = robot.data
        js = robot.read_joints()
        for i, s in enumerate(slots):
            ms = state.motor_state[s]
            ms.q, ms.dq, ms.tau_est, ms.mode = float(js.pos[i]), float(js.vel[i]), float(tau[i]), 1
        quat = d.qpos[3:7]
        imu = state.imu_state
        imu.quaternion = [float(v) for v in quat]
        imu.gyroscope = [float(v) for v in d.qvel[3:6]]
        v = d.qvel[0:3].copy()
        a_w = (v - v_prev) / PHYSICS_DT + np.array([0.0, 0.0, 9.81]) if t_run else np.array([0.0, 0.0, 9.81])
        v_prev = v
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, quat)
        imu.accelerometer = [float(x) for x in rot.reshape(3, 3).T @ a_w]
        state.tick = tick & 0xFFFFFFFF
        state.crc = crc.Crc(state)
        pub.Write(state)
        if t_run is not None and args.duration_s > 0 and t_run >= args.duration_s:
            break
        deadline += PHYSICS_DT
        wait = deadline - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
    last = latest.get("cmd")
    gains = [(last.motor_cmd[s].kp, last.motor_cmd[s].kd) for s in slots] if last is not None else [(0.0, 0.0)]
    result = {**counts, "ticks": tick, "sim_time_s": t_run or 0.0, "fell_at_s": fell_at,
              "last_kp_max": max(g[0] for g in gains), "last_kd_min": min(g[1] for g in gains)}  # fmt: skip
    print(f"[g1_dds_sim] done: {json.dumps(result)}", flush=True)
    if args.report:
        Path(args.report).write_text(json.dumps(result))
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m realgap.envs.deploy.drivers.g1_dds_sim", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--policy", required=True, help="export folder: its MJCF, drives and start pose are simulated")
    p.add_argument("--domain", type=int, default=1, help="DDS domain id (default 1; a real G1 uses 0)")
    p.add_argument("--interface", default="lo", help="network interface (default lo: loopback)")
    p.add_argument("--push_mps", default="0,0", help="push magnitude range LO,HI, m/s (default 0,0: none)")
    p.add_argument("--push_interval_s", default="3,5", help="time between pushes LO,HI, s")
    p.add_argument(
        "--settle_s",
        type=float,
        default=1.0,
        help="pushes start this long after the first command, s (the driver's soft start; default 1)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the push schedule")
    p.add_argument("--duration_s", type=float, default=0.0, help="stop after this simulated time, s (0: run on)")
    p.add_argument("--report", default=None, help="write counts, fall time, last command gains as JSON")
    args = p.parse_args(argv)
    times = np.array([args.duration_s, args.settle_s])
    if not (np.isfinite(times).all() and (times >= 0).all()) or not 0 <= args.domain <= 232:
        raise ValueError("--duration_s and --settle_s must be finite and >= 0, --domain in 0..232")
    run(args)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, FileNotFoundError, ModuleNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
