"""Convert a robot log either way, ``.npz`` ↔ ``.mcap`` (the suffix decides), validated on the way:

    python -m realgap.envs.deploy.log_mcap runs/logs/ep.npz runs/logs/ep.mcap

The log is read and checked by :func:`realgap.envs.deploy.log.load_log` (a log it refuses is not converted) and written
by :meth:`~realgap.envs.deploy.log.RobotLog.save`; the MCAP layout is :mod:`realgap.envs.deploy.mcap_codec`.
"""

from __future__ import annotations

import sys

from realgap.envs.deploy.log import LogError, load_log


def main(argv: list[str] | None = None) -> int:
    """``python -m realgap.envs.deploy.log_mcap IN OUT``: convert a robot log (``.npz`` ↔ ``.mcap``, by suffix).

    Returns:
        0 when written; 2 for bad arguments or a log that cannot be read (one message on stderr).
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] in ("-h", "--help"):
        print("usage: python -m realgap.envs.deploy.log_mcap IN OUT   (IN, OUT: .npz or .mcap robot logs)")
        return 0 if args and args[0] in ("-h", "--help") else 2
    try:
        out = load_log(args[0]).save(args[1])
    except (FileNotFoundError, LogError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"[realgap] wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
