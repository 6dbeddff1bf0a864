"""Evaluation: episode rollouts, robustness sweeps (plan, per-env writes, report, plots), the single-push limit, the
action-space comparison, the scripted grasp (the grasp task solvable, its metric honest) and throughput benchmarks.
Importing this package loads nothing.
"""
