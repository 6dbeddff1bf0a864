"""Single rigid body dynamics (SRBD) of a legged robot: the whole body lumped into one rigid body at its CoM, driven
by the contact forces at the feet. Pure numpy math (:mod:`~realgap.envs.srbd.inertia`,
:mod:`~realgap.envs.srbd.dynamics`) and its parameters from a robot description (:mod:`~realgap.envs.srbd.model`,
MuJoCo forward kinematics)."""
