"""Physical bounds a domain-randomization profile's ranges must respect beyond their own validity: inertial
randomizations that describe a body this robot could have, contact time constants MuJoCo does not clamp. Checked by
the schema at load (:mod:`realgap.envs.dr.profile_schema`) and by the terms against the task's physics step. Pure
Python: no simulator import.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from realgap.envs.dr.inertia_sampling import Range

# Physical bounds of an inertial randomization of one robot link or one manipulated object, checked at load (the
# samplers accept any range that keeps J ≻ 0; a profile must also describe a body that can exist on this robot).
# Each bound is far outside every plausible error ("wide" uses a quarter of it or less) and rejects only ranges that
# describe a different body, where float32 round-off also starts to dominate the written inertia.
INERTIA_BOUNDS: dict[str, tuple[float, float]] = {
    # density scale: a link weighed at a tenth or ten times its CAD mass is a different part, not a model error
    "mass_scale": (0.1, 10.0),
    # radii of gyration ×0.25 .. ×4: beyond that the link's mass would sit outside (or collapse inside) its own shell
    "stretch": (0.25, 4.0),
    # shear 1 = 45° of skew of the mass distribution; more folds it into another shape instead of tilting its axes
    "shear": (-1.0, 1.0),
    # CoM shift per body axis, m: the largest G1 / Panda links (torso, upper arm) are under 0.5 m long
    "com_shift_m": (-0.5, 0.5),
    # payload on one body, kg: more than the whole G1 (35 kg), 16x the Panda's rated 3 kg
    "payload_mass_kg": (0.0, 50.0),
    # payload centre and box edges, m: attached to the body, within a metre of its frame
    "payload_offset_m": (-1.0, 1.0),
    "payload_size_m": (0.0, 1.0),
}
MAX_LUMP_TRAVEL_M = 1.0
"""Farthest the moved lump of a CoM shift may travel, m: ‖max |Δ| per axis‖ / com_moved_fraction (the lump f·m moves
by Δ/f). A 1 cm shift made with f = 0.003 moves 0.3 % of the mass 3.3 m away from a 5 cm cube: a rod-like body whose
smallest principal moment drowns in float32 round-off of the largest."""


MIN_TIMECONST_STEPS = 2.0
"""Shortest contact time constant, in physics steps: MuJoCo silently clamps a solref time constant below ``2·dt`` up to
it, so a shorter sample would not be the contact it claims to be."""


def check_timeconst_range(where: str, timeconst_s: Range, physics_dt: float) -> None:
    """Refuse a solref time-constant range ``[lo, hi]`` [s] whose ``lo`` is under :data:`MIN_TIMECONST_STEPS` physics
    steps of ``physics_dt`` [s] (float32 round-off of ``lo`` is tolerated).

    Raises:
        ValueError: ``lo`` < 2·dt; the message names ``where``, the step and the shortest admissible value.
    """
    shortest = MIN_TIMECONST_STEPS * physics_dt
    if timeconst_s[0] < shortest * (1.0 - 1e-6):
        raise ValueError(
            f"{where}: lo {timeconst_s[0]:g} s is shorter than {MIN_TIMECONST_STEPS:g} physics steps "
            f"(2 × dt = {shortest:g} s at the task's physics step dt = {physics_dt:g} s): MuJoCo would "
            f"silently clamp it up to {shortest:g} s; use lo >= {shortest:g} s"
        )


def check_inertia_bounds(group: Any) -> None:
    """Check an inertial randomization (a profile's ``InertiaGroup``, whose field metadata name kinds and units) against
    :data:`INERTIA_BOUNDS` and :data:`MAX_LUMP_TRAVEL_M`.

    Raises:
        ValueError: A range outside its bound, or a CoM shift whose moved lump travels too far; the message names the
            key, the range and the bound.
    """
    for f in dataclasses.fields(group):
        if f.name not in INERTIA_BOUNDS:
            continue
        lo, hi = INERTIA_BOUNDS[f.name]
        value = getattr(group, f.name)
        ranges = zip("xyz", value, strict=True) if f.metadata["kind"].startswith("vec3:") else [("", value)]
        unit = f" {f.metadata['unit']}" if f.metadata["unit"] else ""
        for axis, (r_lo, r_hi) in ranges:
            if r_lo < lo or r_hi > hi:
                key = f"{f.name}.{axis}" if axis else f.name
                raise ValueError(
                    f"{key}: [{r_lo:g}, {r_hi:g}]{unit} is outside the physical bound [{lo:g}, {hi:g}]"
                    f"{unit} of a robot link's randomization (see INERTIA_BOUNDS)"
                )
    reach = [max(abs(r_lo), abs(r_hi)) for r_lo, r_hi in group.com_shift_m]
    travel = sum(x * x for x in reach) ** 0.5 / group.com_moved_fraction
    if travel > MAX_LUMP_TRAVEL_M:
        raise ValueError(
            f"com_shift_m with com_moved_fraction {group.com_moved_fraction:g}: the moved lump travels up "
            f"to {travel:.3g} m, beyond the {MAX_LUMP_TRAVEL_M:g} m bound (MAX_LUMP_TRAVEL_M): move more "
            "of the mass or shift the CoM less"
        )
