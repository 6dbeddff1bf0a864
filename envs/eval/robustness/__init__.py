"""Robustness sweeps: the factors, plan and statistics as data (sweep, defaults, stats), a task's config made
sweepable (prepare), a sweep point written into every env (apply), the plan run in batches (run), the evaluation from
its inputs to its report (evaluation) and its plots. Importing this package loads nothing.
"""
