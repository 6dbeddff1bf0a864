"""Run an exported policy on a robot through the deploy runtime and report time up and falls per episode.

    realgap deploy --policy configs/policies/balance_g1 --robot mujoco --episodes 8
    realgap deploy --policy configs/policies/grasp_franka --robot franka --hostname 127.0.0.1
    realgap deploy --help                     # every robot (mujoco, hidden, suite, unitree_g1, franka) and flag

The robot-side command: its flags, their checks and the runs live in :mod:`realgap.envs.run.deploy`, which a robot
computer imports without torch or Isaac Lab (``pip install '.[deploy]'``). Bad input exits with status 2 and one
message.
"""

if __name__ == "__main__":
    from realgap.envs.run.deploy import cli

    cli()
