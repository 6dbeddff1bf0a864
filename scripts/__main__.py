"""``python -m realgap.scripts <job> ...``: the ``realgap`` command without its console script
(:mod:`realgap.envs.run.command`)."""

import sys

from realgap.envs.run.command import main

if __name__ == "__main__":
    sys.exit(main())
