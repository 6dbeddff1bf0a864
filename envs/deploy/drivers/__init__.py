"""Robot drivers: :class:`~realgap.envs.deploy.robot.Robot` implementations over robot SDKs, and simulators that
speak the same protocol (``g1_dds_sim``). Each needs its extra (``pip install '.[deploy,unitree]'`` in a clone, or the
wheel with those extras)."""
