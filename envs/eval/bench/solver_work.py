"""What the physics solver does per step, counted rather than timed: contacts, constraint rows and solver iterations of
a task's env against bare stepping of the same scene (``scripts/solver_counts.py``).

Rule: compare the work per physics step before comparing the time per step. Why: on a loaded machine a time ratio
is noise-prone, a count is exact; a solver step that is slower inside the env than in bare stepping must show up as
more work here (docs/results/benchmarks.md, "Why the grasp env's solver step is dearer").
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import torch

from realgap.envs.run.factory import load_cfgs, make_env, simulation
from realgap.tasks import DEFAULT_TASK, check_task


class _SolverCounts:
    """Wraps ``sim.step`` and reads MuJoCo-Warp's counters after each call: contacts (all worlds), constraint rows and
    solver iterations (per world)."""

    def __init__(self, sim: Any) -> None:
        from isaaclab_newton.physics import NewtonManager

        self.rows: list[tuple[int, np.ndarray, np.ndarray]] = []
        step = sim.step

        def counted(*args: Any, **kwargs: Any) -> Any:
            out = step(*args, **kwargs)
            d = NewtonManager._solver.mjw_data
            self.rows.append((int(d.nacon.numpy()[0]), d.nefc.numpy().copy(), d.solver_niter.numpy().copy()))
            return out

        sim.step = counted

    def summary(self, num_envs: int, skip: int) -> dict[str, float]:
        """Means over the steps after the first ``skip`` (the settling after a reset), per world and step."""
        rows = self.rows[skip:]
        return {
            "physics_steps": len(rows),
            "contacts_per_world": float(np.mean([r[0] for r in rows])) / num_envs,
            "constraint_rows_per_world": float(np.mean([r[1].mean() for r in rows])),
            "solver_iterations": float(np.mean([r[2].mean() for r in rows])),
            "solver_iterations_max": int(max(r[2].max() for r in rows)),
        }


def _model_facts() -> dict[str, Any]:
    """Collision filtering and solver options of the running MuJoCo-Warp model."""
    from isaaclab_newton.physics import NewtonManager

    m = NewtonManager._solver.mjw_model
    return {
        "geoms": int(m.ngeom),
        "bodies": int(m.nbody),
        "excluded_body_pairs": int(m.nexclude),
        "geom_pairs": int(m.nxn_geom_pair.shape[0]),
        "geom_pairs_after_filtering": int(m.nxn_geom_pair_filtered.shape[0]),
        "contype": m.geom_contype.numpy().tolist(),
        "conaffinity": m.geom_conaffinity.numpy().tolist(),
        "max_iterations": int(m.opt.iterations),
    }


def nominal_object_inertia(env_cfg: Any) -> None:
    """Give the grasp task's object its nominal body at every reset (the drawn size's solid box: no density scale,
    no CoM shift), keeping the size and pose draws."""
    from realgap.envs.dr.inertia_sampling import InertiaRandomization

    env_cfg.events.reset_object.params["inertia"] = dataclasses.asdict(InertiaRandomization())


def env_counts(
    task: str, num_envs: int, physics_steps: int, seed: int = 0, device: str | None = None, nominal_object: bool = False
) -> dict[str, Any]:
    """Solver work per physics step of ``task``'s env at the zero action (the default pose: the state
    :func:`bare_counts` steps), over the second half of ``physics_steps`` after a reset.

    Args:
        nominal_object: Grasp task only: the object without its inertia randomization (:func:`nominal_object_inertia`).
    """

    env_cfg, _ = load_cfgs(task, device, num_envs=num_envs, seed=seed)
    if nominal_object:
        nominal_object_inertia(env_cfg)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        env.reset()
        counts = _SolverCounts(env.sim)
        zero = torch.zeros(num_envs, env.action_manager.total_action_dim, device=env.device)
        for _ in range(max(1, physics_steps // env.cfg.decimation)):
            env.step(zero)
        out = counts.summary(num_envs, len(counts.rows) // 2) | {"model": _model_facts()}
        env.close()
    return out


def bare_counts(task: str, num_envs: int, physics_steps: int, seed: int = 0, device: str | None = None) -> dict:
    """Solver work per physics step of the same scene stepped with no env around it (as
    :func:`realgap.envs.eval.bench.throughput.bare_physics_steps`: the default pose held, nominal bodies), second
    half."""
    from isaaclab.scene import InteractiveScene
    from isaaclab.sim import SimulationContext

    env_cfg, _ = load_cfgs(task, device, num_envs=num_envs, seed=seed)
    with simulation(env_cfg):
        sim = SimulationContext(env_cfg.sim)
        scene = InteractiveScene(env_cfg.scene)
        sim.reset()
        robot = scene["robot"]
        robot.write_joint_state_to_sim_index(
            position=robot.data.default_joint_pos.torch.clone(), velocity=robot.data.default_joint_vel.torch.clone()
        )
        target, dt = robot.data.default_joint_pos.torch.clone(), sim.get_physics_dt()
        counts = _SolverCounts(sim)
        for _ in range(physics_steps):
            robot.actuators.target_command.set_position_index(value=target)
            scene.write_data_to_sim()
            sim.step(render=False)
            scene.update(dt)
        out = counts.summary(num_envs, physics_steps // 2) | {"model": _model_facts()}
        sim.clear_instance()
    return out


def offset_com_box(
    com_offset_m: float, steps: int = 400, dt: float = 0.005, exact_box_box: bool = False, check_leak: bool = True
) -> dict[str, dict[str, float]]:
    """A 5 cm, 0.1 kg box resting on a table, its CoM ``com_offset_m`` from its centre along x, in MuJoCo C and in
    MuJoCo-Warp (the grasp task's solver settings: implicitfast, pyramidal cone, impratio 1): the engines alone, no
    Newton or Isaac Lab. Returns per engine the means over the second half of ``steps``: contacts, solver iterations,
    the deepest penetration (m) and the largest angular speed of the box (rad/s; 0 at rest).

    Args:
        exact_box_box: Both engines with ``mjDSBL_NATIVECCD`` (realgap's setting, :mod:`realgap.envs.sim.mjwarp`);
            False: each engine's default box–box path (the upstream repro). Build default models before flagged ones
            in a process: the other order doubles MuJoCo-Warp's box–box contacts (same module).
        check_leak: Refuse a default model built in that state (``check_box_box_routine``); False only to show it.
    """
    import mujoco
    import mujoco_warp as mjw
    import warp as wp

    xml = f"""<mujoco><option timestep="{dt}" integrator="implicitfast" cone="pyramidal" impratio="1"/><worldbody>
      <geom type="box" size="0.25 0.4 0.1" pos="0 0 0.1"/><body pos="0 0 0.2251"><freejoint/>
      <geom type="box" size="0.025 0.025 0.025"/><inertial pos="{com_offset_m} 0 0" mass="0.1"
      diaginertia="4.2e-5 4.2e-5 4.2e-5"/></body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    if exact_box_box:
        from realgap.envs.sim.mjwarp import EXACT_BOX_BOX_FLAGS

        model.opt.disableflags |= EXACT_BOX_BOX_FLAGS

    def run(step: Any, read: Any) -> dict[str, float]:
        rows = []
        for _ in range(steps):
            step()
            rows.append(read())
        late = np.array(rows[steps // 2 :], dtype=float)
        return {
            "contacts": float(late[:, 0].mean()),
            "solver_iterations": float(late[:, 1].mean()),
            "max_angular_speed": float(late[:, 2].max()),
            "max_penetration_m": float(late[:, 3].max()),
        }

    data = mujoco.MjData(model)
    c = run(
        lambda: mujoco.mj_step(model, data),
        lambda: (data.ncon, data.solver_niter[0], np.linalg.norm(data.qvel[3:]), -min(data.contact.dist, default=0)),
    )
    with wp.ScopedDevice("cpu"):
        m = mjw.put_model(model)
        if check_leak:
            from realgap.envs.sim.mjwarp import check_box_box_routine

            check_box_box_routine(m)  # refuse the doubled contacts, never report them
        d = mjw.put_data(model, mujoco.MjData(model), nworld=1, nconmax=16, njmax=64)

        def read() -> tuple[float, ...]:
            n = int(d.nacon.numpy()[0])
            depth = -float(d.contact.dist.numpy()[:n].min()) if n else 0.0
            return n, int(d.solver_niter.numpy()[0]), float(np.linalg.norm(d.qvel.numpy()[0, 3:])), depth

        warp = run(lambda: mjw.step(m, d), read)
    return {"mujoco_c": c, "mujoco_warp": warp}


@dataclasses.dataclass(frozen=True)
class SolverCountsRequest:
    """A count as scripts/solver_counts.py's flags give it (see its ``--help`` for each)."""

    task: str = DEFAULT_TASK
    num_envs: int = 16
    device: str | None = None
    seed: int = 0
    steps: int = 240
    no_box: bool = False
    json: str | None = None


def solver_counts(req: SolverCountsRequest) -> dict[str, Any]:
    """The task's env, for the grasp task also with the object's nominal body, and the bare scene, each counted over
    ``req.steps`` physics steps; then (unless ``no_box``) the CoM-offset box in both engines. Prints each table as it
    is counted; writes every count to ``req.json`` if given; returns them.

    Raises:
        UnknownTaskError: ``req.task`` is not a registered task.
    """
    task, n, steps = check_task(req.task), req.num_envs, req.steps
    builds = {"env": env_counts(task, n, steps, req.seed, req.device)}
    if "Grasp" in task:
        builds["env, object nominal body"] = env_counts(task, n, steps, req.seed, req.device, True)
    builds["bare scene"] = bare_counts(task, n, steps, req.seed, req.device)
    print(f"\n{task}, {n} envs, per physics step (second half of {steps}):")
    print(f"{'build':<28} {'contacts/world':>15} {'rows/world':>11} {'iterations':>11} {'max':>4}  filtered pairs")
    for name, c in builds.items():
        print(
            f"{name:<28} {c['contacts_per_world']:>15.2f} {c['constraint_rows_per_world']:>11.2f} "
            f"{c['solver_iterations']:>11.2f} {c['solver_iterations_max']:>4}  "
            f"{c['model']['geom_pairs_after_filtering']} of {c['model']['geom_pairs']}"
        )
    result: dict[str, Any] = {"task": task, "num_envs": n, "builds": builds}
    if not req.no_box:
        # realgap's box-box setting (the default path's rows: scripts/engine_agreement.py, in a process of their own)
        result["offset_com_box"] = {off: offset_com_box(off, exact_box_box=True) for off in (0.0, 0.01)}
        print("\n5 cm box on a table, CoM offset along x, exact box-box; engines alone (second half of 400 steps):")
        for off, engines in result["offset_com_box"].items():
            for engine, c in engines.items():
                print(
                    f"  offset {off * 1000:>4.0f} mm  {engine:<12} contacts {c['contacts']:.2f}  iterations "
                    f"{c['solver_iterations']:.2f}  max |omega| {c['max_angular_speed']:.2g} rad/s"
                )
    if req.json:
        with open(req.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return result
