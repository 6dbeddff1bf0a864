"""A minimal G1 on the wire, for an environment that holds only unitree_sdk2py and a CycloneDDS (no realgap, no
MuJoCo): CycloneDDS 0.10.2 interop (tests/slow/test_cyclonedds_010.py runs it under that version's Python).

    python g1_dds_peer.py DOMAIN SECONDS REPORT.json

Publishes ``rt/lowstate`` at 500 Hz (``tick``: 2 ms periods since start, a valid CRC, ``mode_machine`` 5, an
upright unit
quaternion, the joints at rest at 0) and counts the ``rt/lowcmd`` commands it receives; after ``SECONDS`` (or on
SIGTERM) writes the counts, the CycloneDDS version and the last command's gains to ``REPORT.json``.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from importlib.metadata import version


def main(domain: int, seconds: float, report: str) -> None:
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
    from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowState_
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
    from unitree_sdk2py.utils.crc import CRC

    crc = CRC()
    counts = {"commands": 0, "crc_failures": 0, "states": 0}
    last: list = []

    def on_cmd(msg: LowCmd_) -> None:
        if crc.Crc(msg) != msg.crc:
            counts["crc_failures"] += 1
            return
        counts["commands"] += 1
        last[:] = [msg]

    ChannelFactoryInitialize(domain, "lo")
    pub = ChannelPublisher("rt/lowstate", LowState_)
    pub.Init()
    sub = ChannelSubscriber("rt/lowcmd", LowCmd_)
    sub.Init(on_cmd, 10)
    state = unitree_hg_msg_dds__LowState_()
    state.mode_machine, state.imu_state.quaternion = 5, [1.0, 0.0, 0.0, 0.0]
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    t0 = deadline = time.monotonic()
    while not stop["now"] and time.monotonic() - t0 < seconds:
        state.tick = 1 + int((time.monotonic() - t0) / 0.002)  # the robot's clock: a late state skips ticks
        state.crc = crc.Crc(state)
        pub.Write(state)
        counts["states"] += 1
        deadline += 0.002
        time.sleep(max(deadline - time.monotonic(), 0.0))
    gains = [(m.kp, m.kd) for m in last[0].motor_cmd[:29]] if last else [(0.0, 0.0)]
    out = dict(counts, cyclonedds=version("cyclonedds"))
    out.update(last_kp_max=max(g[0] for g in gains), last_kd_min=min(g[1] for g in gains))
    with open(report, "w") as f:
        json.dump(out, f)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]), sys.argv[3])
