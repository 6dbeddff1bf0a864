"""Default values of each robustness factor per robot: the points ``scripts/evaluate.py`` sweeps unless ``--values``
says otherwise (each value is checked against its factor in :mod:`realgap.envs.eval.robustness.sweep`)."""

from __future__ import annotations

DEFAULT_VALUES: dict[str, dict[str, tuple[float, ...]]] = {
    # G1 (33 kg): payload up to 30 % of its mass; CoM ±5 cm on the 7.8 kg torso; delay up to one policy step (20 ms).
    "g1": {
        "payload_kg": (0.0, 5.0, 10.0),
        "link_mass_scale": (0.8, 1.0, 1.2),
        "com_shift_m": (-0.05, 0.0, 0.05),
        "inertia_scale": (0.5, 1.0, 2.0),
        "command_delay_s": (0.0, 0.005, 0.01, 0.02),
        "pd_gain_scale": (0.5, 0.75, 1.0, 1.1),  # > 1.1: the free ankle's explicit-PD margin passes 1
        "torque_limit_scale": (0.25, 0.5, 1.0),
        "joint_friction_scale": (0.0, 1.0, 3.0),
        "contact_friction": (0.2, 0.4, 0.6, 1.0),
        # solref time constant from the stiffest the 5 ms step resolves (2·dt) to 4x MuJoCo's default 0.02 s
        # (a soft floor or mat); damping ratio from a bouncy 0.25 to an overdamped 2
        "contact_timeconst_s": (0.01, 0.02, 0.04, 0.08),
        "contact_dampratio": (0.25, 0.5, 1.0, 2.0),
        "push_mps": (0.0, 0.2, 0.4, 0.6),  # the task pushes U(0.2, 0.4): standing balance's limit, then beyond
        # current loops run at kHz: how slow a loop does the policy tolerate (5 Hz: τ = 32 ms)? The G1's torque-speed
        # line reaches zero at the velocity limit, so a speed limit at 1 x changes nothing; lower ones cut.
        "torque_filter_hz": (5.0, 10.0, 20.0, 50.0),
        "speed_limit_scale": (0.25, 0.5, 1.0),
        # planetary lost motion is 0.0015-0.005 rad (b, half the play); 0.01 rad is a worn gearbox. Stiffness around
        # the 1200 N·m/rad stand-in (envs/robots/g1.py), from a soft series-elastic joint (300 N·m/rad) up to 8x
        # (9600 N·m/rad, the low end of planetary gearboxes of this class); stable at any stiffness there.
        "backlash_rad": (0.0, 0.002, 0.005, 0.01),
        "transmission_stiffness_scale": (0.25, 0.5, 1.0, 2.0, 8.0),
    },
    # Panda grasp: wrist payload up to 1 kg (a camera is 0.1-0.25 kg); the object ×0.5-3.
    "panda": {
        "payload_kg": (0.0, 0.25, 0.5, 1.0),
        "link_mass_scale": (0.9, 1.0, 1.1),
        "com_shift_m": (-0.02, 0.0, 0.02),
        "inertia_scale": (0.5, 1.0, 2.0),
        "object_mass_scale": (0.5, 1.0, 2.0, 3.0),
        "command_delay_s": (0.0, 0.005, 0.02),
        "pd_gain_scale": (0.5, 0.75, 1.0),
        "torque_limit_scale": (0.5, 0.75, 1.0),
        "joint_friction_scale": (0.0, 1.0, 3.0),
        "contact_friction": (0.3, 0.5, 0.8, 1.0),
        "contact_timeconst_s": (0.01, 0.02, 0.04, 0.08),  # pad-object pair: as stiff as the step allows to 4x softer
        "contact_dampratio": (0.25, 0.5, 1.0, 2.0),
        "torque_filter_hz": (5.0, 10.0, 20.0, 50.0),
        "speed_limit_scale": (0.25, 0.5, 1.0),
        # the wrist stand-in (envs/robots/panda.py, 600 N·m/rad): harmonic drives have next to no lost motion, so
        # 0.005-0.01 rad is a damaged or a cheap cycloidal/planetary wrist; stiffness up to the 5 ms step's 1.55x
        "backlash_rad": (0.0, 0.002, 0.005, 0.01),
        "transmission_stiffness_scale": (0.25, 0.5, 1.0, 1.5),
    },
}
"""Default sweep values per robot (the nominal value is added when missing)."""
