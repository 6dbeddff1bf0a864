"""Evaluation: the policies an evaluation runs and their rollouts (policies, rollout), play and every checkpoint of a
run (play, checkpoints), seed-level statistics, two policies on the hidden robot (hidden_compare); by family in
sub-packages: robustness sweeps (robustness/), pushes (push/), the action-space comparison (compare/), grasp checks
(grasp/), the SRBD controller (srbd/), throughput benchmarks (bench/), the held-out robot suite (suite/) and the
transfer study over it (study/).
Importing this package loads nothing.
"""
