"""Training runs: the env factory, the training entry point, the rsl-rl runner with exact resume, run folders, the
CLI's error handling and progress lines, and the robot command line (``deploy``: ``realgap deploy``, torch-free).
Imports :mod:`realgap.tasks`; importing this package loads nothing.
"""
