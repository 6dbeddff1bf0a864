"""The held-out robot suite: families of robots that training never sees, drawn from fixed seeds and run in MuJoCo C
through the deploy runtime (``scripts/evaluate_suite.py``; the study's rules: ``docs/results/transfer.md``).

- :mod:`~realgap.envs.eval.suite.schema`: the versioned suite file (``configs/suites/*.yaml``), loaded and validated
  by pure code;
- :mod:`~realgap.envs.eval.suite.draw`: one robot's parameters from its family's ranges and its seed;
- :mod:`~realgap.envs.eval.suite.plant`: that robot built on MuJoCo C (the hidden robot of
  :mod:`realgap.envs.deploy.hidden_robot` with the suite's body, contact and sensor errors);
- :mod:`~realgap.envs.eval.suite.run`: an export (or the zero action) on every robot, the summary per family;
- :mod:`~realgap.envs.eval.suite.report`: the JSON, markdown and plot.

Importing this package loads nothing.
"""
