"""Every export in configs/policies is reproducible from the registry: it records a registered task, and that task's
config with the overrides the export records resolves to the policy interface the export describes (action terms,
offsets, scales, ramp, raw clip, rates, observations). The shipped policies (the balance reference and the recommended
grasp) are one command each: their registered task with no override at all resolves to what they record.

The resolved config is read from the registry (``load_cfgs``) and compared with the export's ``policy.json``; nothing
of either side is copied into this file.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
EXPORTS = sorted(p.parent for p in (ROOT / "configs" / "policies").glob("*/policy.json"))


def _meta(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "policy.json").read_text())


def _recorded_overrides(argv: list[str]) -> list[str]:
    """The ``--set`` items of a recorded command line (every argument after ``--set`` up to the next flag)."""
    items: list[str] = []
    taking = False
    for arg in argv:
        if arg.startswith("--"):
            taking = arg == "--set"
        elif taking:
            items.append(arg)
    return items


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _per_joint(value: Any, joints: list[str], what: str) -> list[float]:
    """A cfg value (a number or ``{regex: number}``) resolved on ``joints`` as Isaac Lab's joint actions do: a joint
    matched by one pattern takes its value, a joint matched by none 0, a joint matched by several is an error."""
    if not isinstance(value, dict):
        return [float(value)] * len(joints)
    out = []
    for joint in joints:
        hits = [v for pattern, v in value.items() if re.fullmatch(pattern, joint)]
        assert len(hits) <= 1, f"{what}: {joint} matched by {len(hits)} patterns"
        out.append(float(hits[0]) if hits else 0.0)
    return out


def _assert_matches(meta: dict[str, Any], env_cfg: Any, agent_cfg: Any, label: str) -> None:
    """Assert that the resolved configs describe the policy interface recorded in ``meta``."""
    for key in ("physics_hz", "control_hz", "policy_hz", "target_mode"):
        assert meta["rates"][key] == env_cfg.rates[key], f"{label}: rates.{key}"
    assert meta["actions"]["raw_clip"] == agent_cfg.clip_actions, f"{label}: raw action clip"

    groups = agent_cfg.obs_groups["actor"]
    recorded_obs = [(t["group"], t["name"]) for t in meta["observations"]["terms"]]
    cfg_obs = []
    for group in groups:
        group_cfg = getattr(env_cfg.observations, group)
        for name, term in group_cfg.__dict__.items():
            if hasattr(term, "func"):
                cfg_obs.append((group, name))
                rec = next(t for t in meta["observations"]["terms"] if (t["group"], t["name"]) == (group, name))
                noise = None if term.noise is None else [term.noise.n_min, term.noise.n_max]
                rec_cfg = None if rec["noise"] is None else rec["noise"]["cfg"]
                rec_noise = None if rec_cfg is None else [rec_cfg["n_min"], rec_cfg["n_max"]]
                assert (noise is None) == (rec_noise is None), f"{label}: noise of {name}"
                if noise is not None:
                    assert noise == pytest.approx(rec_noise), f"{label}: noise of {name}"
    assert recorded_obs == cfg_obs, f"{label}: observation terms"

    terms = meta["actions"]["terms"]
    cfg_terms = {name: term for name, term in env_cfg.actions.__dict__.items() if term is not None}
    assert [t["name"] for t in terms] == list(cfg_terms), f"{label}: action terms"
    default_pose = env_cfg.scene.robot.init_state.joint_pos
    for rec in terms:
        cfg, params, joints = cfg_terms[rec["name"]], rec["params"], rec["joint_names"]
        where = f"{label}: actions.{rec['name']}"
        if rec["type"] == "joint_position_offset":
            offset = default_pose if cfg.use_default_offset else cfg.offset
            assert params["offset"] == pytest.approx(_per_joint(offset, joints, where), abs=1e-6), f"{where}.offset"
            assert params["scale"] == pytest.approx(_per_joint(cfg.scale, joints, where), rel=1e-6), f"{where}.scale"
            assert params.get("ramp_s", 0.0) == getattr(cfg, "ramp_s", 0.0), f"{where}.ramp_s"
        elif rec["type"] == "ee_pose_delta":
            assert params["body"] == cfg.body_name, f"{where}.body"
            assert params["body_offset"]["pos"] == pytest.approx(list(cfg.body_offset.pos)), f"{where}.body_offset"
            assert params["scale"] == pytest.approx(list(cfg.scale)), f"{where}.scale"
            assert params["ik"]["method"] == cfg.controller.ik_method, f"{where}.ik"
        elif rec["type"] == "binary_joint_position":
            assert params["open"] == pytest.approx(_per_joint(cfg.open_command_expr, joints, where)), f"{where}.open"
            assert params["close"] == pytest.approx(_per_joint(cfg.close_command_expr, joints, where)), f"{where}.close"
            if "speed" in params:  # the hand's own speed; exports made before it have none (their idealised hand)
                assert params["speed"] == pytest.approx([cfg.max_speed] * len(joints)), f"{where}.speed"
        else:
            pytest.fail(f"{where}: the export's term type {rec['type']!r} is not compared by this test")


@pytest.mark.parametrize("folder", EXPORTS, ids=[p.name for p in EXPORTS])
def test_each_export_is_its_recorded_command(folder: Path) -> None:
    """The recorded task is registered, and it with the recorded ``--set`` overrides resolves to the export."""
    from realgap.envs.run.factory import load_cfgs
    from realgap.envs.run.overrides import apply_overrides
    from realgap.tasks import registered_tasks

    meta = _meta(folder)
    assert meta["task"] in registered_tasks(), f"{folder.name}: {meta['task']} is not registered"
    argv = meta["training"]["argv"]
    env_cfg, agent_cfg = load_cfgs(meta["task"], "cpu", rates=_flag(argv, "--rates"))
    apply_overrides(env_cfg, agent_cfg, _recorded_overrides(argv))
    _assert_matches(meta, env_cfg, agent_cfg, folder.name)


def test_shipped_policies_are_one_command_each() -> None:
    """The balance reference is what the default task trains, the grasp reference (under the hand's own speed) what
    the recommended grasp task trains: their registered configs with no override resolve to the exports."""
    from realgap.envs.run.factory import load_cfgs
    from realgap.tasks import DEFAULT_TASK, GRASP_TASK

    for folder, task in (
        (ROOT / "configs/policies/balance_g1", DEFAULT_TASK),
        (ROOT / "configs/policies/grasp_franka_hand", GRASP_TASK),
    ):
        env_cfg, agent_cfg = load_cfgs(task, "cpu")
        _assert_matches(_meta(folder), env_cfg, agent_cfg, f"{folder.name} as {task}")


def test_the_standing_task_does_not_reproduce_the_crouch() -> None:
    """The comparison can fail: the balance reference is not the standing task's config."""
    from realgap.envs.run.factory import load_cfgs

    env_cfg, agent_cfg = load_cfgs("Realgap-Balance-G1-v0", "cpu")
    with pytest.raises(AssertionError, match="offset"):
        _assert_matches(_meta(ROOT / "configs/policies/balance_g1"), env_cfg, agent_cfg, "standing")


def test_train_trains_the_default_task() -> None:
    """``scripts/train.py`` without ``--task`` trains ``realgap.tasks.DEFAULT_TASK``, the shipped balance recipe."""
    from realgap.tasks import DEFAULT_TASK

    spec = importlib.util.spec_from_file_location("train_cli", ROOT / "scripts" / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.parse_args([]).task == DEFAULT_TASK


def test_shipped_balance_tasks_hold_only_terms_that_act() -> None:
    """The balance tasks as shipped have no reward term at weight 0 and no curriculum that is off; the terms studied as
    levers are in the Levers variant, off until a run sets them."""
    from realgap.envs.run.factory import load_cfgs
    from realgap.tasks import DEFAULT_TASK

    for task in (DEFAULT_TASK, "Realgap-Balance-G1-v0"):
        env_cfg, _ = load_cfgs(task, "cpu")
        weights = {name: term.weight for name, term in env_cfg.rewards.__dict__.items() if hasattr(term, "weight")}
        assert weights and all(w != 0.0 for w in weights.values()), f"{task}: {weights}"
        assert list(env_cfg.curriculum.__dict__) == ["metrics"], task
    levers, _ = load_cfgs("Realgap-Balance-G1-Levers-v0", "cpu")
    for name in ("capture_point", "capture_support", "capture_margin", "step_when_needed", "lift_when_needed"):
        assert getattr(levers.rewards, name).weight == 0.0
    assert levers.curriculum.push_level.params["start_mps"] is None


def test_shipped_grasp_tasks_hold_only_terms_that_act() -> None:
    """Every grasp interface as shipped has no reward at weight 0 and no reverse curriculum; its Levers variant has the
    speed-margin penalty at weight 0 and the reverse curriculum at fraction 0."""
    from realgap.envs.run.factory import load_cfgs
    from realgap.tasks.grasp import ACTION_SPACE_IDS, levers_task

    for task in ACTION_SPACE_IDS.values():
        env_cfg, _ = load_cfgs(task, "cpu")
        weights = {name: term.weight for name, term in env_cfg.rewards.__dict__.items() if hasattr(term, "weight")}
        assert weights and all(w != 0.0 for w in weights.values()), f"{task}: {weights}"
        assert env_cfg.events.reset_from_states is None, task
        levers, _ = load_cfgs(levers_task(task), "cpu")
        assert levers.rewards.speed_margin.weight == 0.0 and levers.events.reset_from_states.params["fraction"] == 0.0
