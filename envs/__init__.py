"""realgap.envs: the machinery the tasks are built from and the tools built on the tasks, in one-way layers.

Lower layers (no import of :mod:`realgap.tasks` or of an upper layer):

- :mod:`realgap.envs.rates`: physics / servo / policy time scales (pure Python);
- :mod:`realgap.envs.robots`: every robot fact (description source, joints, bodies, action scales, mirror map);
- :mod:`realgap.envs.sim`: Isaac Lab glue (physics settings, scene, offline assets, NaN guard, actuator adapter);
- :mod:`realgap.envs.dr`: domain randomization (inertia math, samplers, profiles, event terms, the push);
- :mod:`realgap.envs.format`: the exported policy format (schema, metadata, validation, the verifying loader);
- :mod:`realgap.envs.deploy`: the torch-free robot-side runtime, the robots it drives (MuJoCo, hidden, drivers) and
  the pushed balance episode.

Upper layers (above :mod:`realgap.tasks`): :mod:`realgap.envs.run` (factory, training, run folders, CLI helpers, the
robot command line), :mod:`realgap.envs.eval` (rollouts; robustness, pushes, comparison, grasp, SRBD, benchmarks and
the held-out suite in sub-packages), :mod:`realgap.envs.identify` (the actuator chain identified from robot logs),
:mod:`realgap.envs.sim2sim` (Isaac Lab against MuJoCo) and :mod:`realgap.envs.export` (ONNX/TorchScript with
metadata).
``tests/unit/test_layering.py`` checks it.
"""
