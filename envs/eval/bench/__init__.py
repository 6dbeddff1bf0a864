"""Throughput and solver-work measurements: env, physics, PPO and MuJoCo steps per second, the benchmark report, what
the solver does per step, the cost of reset-time domain randomization. Importing this package loads nothing.
"""
