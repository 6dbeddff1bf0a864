"""Domain randomization: consistent inertia math and samplers (pure torch), profiles as data (``configs/dr/``), the
Isaac Lab event terms that apply them, one file per target (``events``: body inertia and the shared helpers;
``friction``, ``actuation``, ``contact``, ``object``: the grasped object; ``push``), and
:func:`~realgap.envs.dr.apply.apply_dr_profile`, which turns a profile into named event terms.

Importing this package loads nothing; the pure modules (``inertia``, ``inertia_sampling``, ``sampling``, ``profile``)
load no simulator.
"""
