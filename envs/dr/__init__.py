"""Domain randomization: consistent inertia math and samplers (pure torch), profiles as data (``configs/dr/``), the
Isaac Lab event terms that apply them (body inertia and joint friction, actuation, contacts, the push), and
:func:`~realgap.envs.dr.apply.apply_dr_profile`, which turns a profile into named event terms.

Importing this package loads nothing; the pure modules (``inertia``, ``inertia_sampling``, ``sampling``, ``profile``)
load no simulator.
"""
