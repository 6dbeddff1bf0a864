"""The transfer study of issue 57 (docs/results/transfer.md): which modelling and randomization choice closes which
part of the sim-to-real gap, every arm trained, exported, played and scored on the held-out suite by one command
(``scripts/transfer_study.py``), across sittings.

- :mod:`~realgap.envs.eval.study.arms`: the arms as data (task, training base, DR profile per arm);
- :mod:`~realgap.envs.eval.study.steps`: one (arm, seed): train, export, Play, suite, each skipped once done;
- :mod:`~realgap.envs.eval.study.summary`: per seed, per arm, between arms (pure);
- :mod:`~realgap.envs.eval.study.run`: a sitting: the request checked against the folder's, pairs in parallel, the
  summary written.

Importing this package loads nothing.
"""
