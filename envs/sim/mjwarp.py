"""MuJoCo-Warp as every realgap scene runs it: box–box contacts from the exact box–box routine, not native CCD.

Rule: every MuJoCo-Warp model realgap builds sets ``mjDSBL_NATIVECCD`` (:data:`EXACT_BOX_BOX_FLAGS`). Why: MuJoCo-Warp
3.12's default box–box path (native convex CCD) gives a box resting on a box a contact set MuJoCo C does not — all
four corners at the deepest corner's depth below ~1 mrad of tilt, the shallow pair dropped above ~1.6 mrad — so a box
whose centre of mass is off its centre rocks on the table instead of resting (docs/results/engine_agreement.md has
the repro and the figures). With the flag, MuJoCo-Warp uses the same box–box routine as MuJoCo C's classic path.

The flag is model-wide but only changes box–box pairs (MuJoCo-Warp's collision table); other pairs keep their
routines. It must be set on *every* model a process builds: MuJoCo-Warp keeps the primitive pair types it has compiled
in a process-wide list that only grows, so a default model built after a flagged one runs box–box twice (both
routines) and doubles its contacts. :func:`check_box_box_routine` refuses a model built into that state.
"""

from __future__ import annotations

from typing import Any

import mujoco
from isaaclab.utils import configclass
from isaaclab_newton.physics import MJWarpSolverCfg
from isaaclab_newton.physics.mjwarp_manager import NewtonMJWarpManager
from newton.solvers import SolverMuJoCo

EXACT_BOX_BOX_FLAGS = int(mujoco.mjtDisableBit.mjDSBL_NATIVECCD)
"""MuJoCo disable bits realgap adds to every MuJoCo-Warp model (box–box by the exact routine)."""


class BoxBoxLeakError(RuntimeError):
    """A MuJoCo-Warp model with native box–box CCD was built after one without it in the same process."""


def check_box_box_routine(mjw_model: Any) -> None:
    """Refuse a MuJoCo-Warp model whose box–box pairs would run through both routines.

    Args:
        mjw_model: A ``mujoco_warp`` model (``SolverMuJoCo.mjw_model``).

    Raises:
        BoxBoxLeakError: The model keeps native CCD for box–box while this process has already compiled the exact
            routine for another model (the module docstring says why that doubles the contacts).
    """
    from mujoco_warp._src import collision_primitive
    from mujoco_warp._src.types import GeomType

    native = not int(mjw_model.opt.disableflags) & EXACT_BOX_BOX_FLAGS
    compiled = (GeomType.BOX, GeomType.BOX) in collision_primitive._PRIMITIVE_COLLISION_TYPES
    if native and compiled:
        raise BoxBoxLeakError(
            "this MuJoCo-Warp model uses native CCD for box-box pairs, but this process already compiled the exact "
            "box-box routine for another model: both would run and every box-box contact would count twice. Build "
            "every model with realgap.envs.sim.mjwarp.EXACT_BOX_BOX_FLAGS (or one model per process)"
        )


class ExactBoxBoxSolverMuJoCo(SolverMuJoCo):
    """Newton's MuJoCo-Warp solver with :data:`EXACT_BOX_BOX_FLAGS` in the MuJoCo model it builds.

    The flag goes into the model spec before MuJoCo compiles it and before MuJoCo-Warp's ``put_model``, so the MuJoCo C
    model (``mj_model``) and the MuJoCo-Warp model (``mjw_model``) both carry it.
    """

    def _convert_to_mjc(self, model: Any, *args: Any, disableflags: int = 0, **kwargs: Any) -> Any:
        return super()._convert_to_mjc(model, *args, disableflags=disableflags | EXACT_BOX_BOX_FLAGS, **kwargs)


class NewtonExactBoxBoxManager(NewtonMJWarpManager):
    """Isaac Lab's MuJoCo-Warp physics manager building :class:`ExactBoxBoxSolverMuJoCo`.

    The name starts with ``Newton``: Isaac Lab picks an asset's backend from its physics manager's class name.
    """

    @classmethod
    def _create_solver(cls, model: Any, solver_cfg: MJWarpSolverCfg) -> SolverMuJoCo:
        kwargs = cls._filter_solver_kwargs(ExactBoxBoxSolverMuJoCo, solver_cfg)
        kwargs.pop("ls_parallel", None)  # deprecated in Newton: forwarding it warns (as Isaac Lab's manager does)
        solver = ExactBoxBoxSolverMuJoCo(model, **kwargs)
        check_box_box_routine(solver.mjw_model)
        return solver


@configclass
class ExactBoxBoxSolverCfg(MJWarpSolverCfg):
    """:class:`MJWarpSolverCfg` whose manager builds the solver with the exact box–box routine (module docstring)."""

    class_type: type = NewtonExactBoxBoxManager
