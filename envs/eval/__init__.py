"""Evaluation: episode rollouts, robustness sweeps (plan, per-env writes, report, plots), the single-push limit, the
action-space comparison and throughput benchmarks. Importing this package loads nothing.
"""
