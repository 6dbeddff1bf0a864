"""Contact and constraint buffer use of MuJoCo-Warp, read after a step: how close a build is to overflowing.

Rule: after stepping, the contacts detected across all worlds stay below ``naconmax`` (``nconmax`` x worlds) and every
world's constraint rows stay below ``njmax``; reaching the cap means contacts or constraints were dropped silently.
Why: the caps are set per task (:func:`realgap.envs.sim.physics.newton_physics`) from CPU runs of a few envs, and a
4,096-env GPU build must not overflow where 16 envs did not.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BufferUse:
    """Peak use of the solver's buffers after a step.

    Attributes:
        contacts: Contacts detected across all worlds.
        contacts_max: ``naconmax``, the shared contact buffer size.
        rows_peak: The most constraint rows any world used.
        rows_max: ``njmax``, constraint rows per world.
    """

    contacts: int
    contacts_max: int
    rows_peak: int
    rows_max: int

    @property
    def overflowed(self) -> bool:
        """A buffer reached its cap (MuJoCo-Warp drops what does not fit)."""
        return self.contacts >= self.contacts_max or self.rows_peak >= self.rows_max


def buffer_use() -> BufferUse:
    """The running Newton MuJoCo-Warp solver's buffer use (call after stepping an env)."""
    from isaaclab_newton.physics import NewtonManager

    data = NewtonManager._solver.mjw_data
    return BufferUse(int(data.nacon.numpy()[0]), int(data.naconmax), int(data.nefc.numpy().max()), int(data.njmax))
