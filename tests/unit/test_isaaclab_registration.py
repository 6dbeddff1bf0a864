"""What Isaac Lab 3.0's CLI needs from realgap's registration (DESIGN.md, "Isaac Lab's CLI"), checked without it:

- pyproject.toml declares the ``isaaclab.tasks`` entry point (the module ``isaaclab list_envs`` / ``train`` import to
  register the ids) and the ``realgap`` console command, both naming what exists;
- every id names its configs as ``"module:attribute"`` strings (``list_envs`` prints them; its project view matches
  them against the entry point's module) and ``default_agent = "rsl_rl"`` (no ``--rl_library`` needed);
- ``play_mode()`` on a training id's config gives its ``-Play-v0`` config (``isaaclab play`` plays the training id).
"""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


def _resolve(reference: str) -> object:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def test_pyproject_declares_the_task_entry_point_and_the_command() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["isaaclab.tasks"] == {"realgap": "realgap.tasks"}
    assert callable(_resolve(project["scripts"]["realgap"]))


def test_every_id_names_string_configs_and_the_default_agent() -> None:
    import gymnasium as gym

    from realgap.tasks import registered_tasks

    tasks = registered_tasks()
    assert len(tasks) == 6 + 32  # balance: 3 ids and their Play variants; grasp: 8 interfaces x (plain, Levers) x 2
    for task in tasks:
        kwargs = gym.spec(task).kwargs
        assert kwargs["default_agent"] == "rsl_rl", task
        for key in ("env_cfg_entry_point", "rsl_rl_cfg_entry_point"):
            reference = kwargs[key]
            assert isinstance(reference, str) and reference.startswith("realgap.tasks."), (task, reference)
            assert callable(_resolve(reference)), (task, reference)


@pytest.mark.parametrize(
    "task",
    ["Realgap-Balance-G1-Crouch-v0", "Realgap-Balance-G1-Levers-v0", "Realgap-Grasp-Franka-EEPoseDelta-Levers-v0"],
)
def test_play_mode_of_the_training_config_is_the_play_variant(task: str) -> None:
    import gymnasium as gym
    from isaaclab.utils import to_dict

    from realgap.tasks import play_task

    train_cfg = _resolve(gym.spec(task).kwargs["env_cfg_entry_point"])()
    play_cfg = _resolve(gym.spec(play_task(task)).kwargs["env_cfg_entry_point"])()
    assert to_dict(train_cfg) != to_dict(play_cfg)
    train_cfg.play_mode()  # what isaaclab play does to the training id's config
    assert to_dict(train_cfg) == to_dict(play_cfg)
    assert play_cfg.scene.num_envs == 32 and not play_cfg.observations.policy.enable_corruption
    play_cfg.play_mode()  # idempotent: isaaclab play on a -Play-v0 id applies it once more
    assert to_dict(train_cfg) == to_dict(play_cfg)


def _run_folder(tmp: Path, realgap_task: str | None = None, isaaclab: dict | None = None) -> Path:
    """A run folder with one (empty) checkpoint and the records asked for."""
    import json

    (tmp / "params").mkdir(parents=True)
    (tmp / "model_1.pt").write_bytes(b"")
    if realgap_task is not None:
        (tmp / "params" / "run.json").write_text(json.dumps({"task": realgap_task, "seed": 0}))
    if isaaclab is not None:
        (tmp / "run.json").write_text(json.dumps(isaaclab))
    return tmp / "model_1.pt"


def test_run_task_reads_realgap_then_isaaclab_records_and_refuses_neither(tmp_path: Path) -> None:
    from realgap.envs.run.run_dir import CheckpointError, run_task

    manifest = {"version": 1, "library": "rsl_rl", "task": "Realgap-Grasp-Franka-v0", "metadata": {}}
    assert run_task(_run_folder(tmp_path / "a", "Realgap-Balance-G1-v0", manifest)) == "Realgap-Balance-G1-v0"
    assert run_task(_run_folder(tmp_path / "b", None, manifest)) == "Realgap-Grasp-Franka-v0"  # isaaclab train's
    with pytest.raises(
        CheckpointError,
        match=r"names no task: neither realgap's record .*params/run.json.* nor Isaac "
        r"Lab's .*run.json.*; pass --task",
    ):
        run_task(_run_folder(tmp_path / "c"))
    with pytest.raises(CheckpointError, match="trained with 'skrl'; realgap loads rsl_rl checkpoints"):
        run_task(_run_folder(tmp_path / "d", None, manifest | {"library": "skrl"}))


def test_play_of_a_run_without_a_task_is_refused_before_any_env(tmp_path: Path) -> None:
    """The silent default is gone: a checkpoint whose run names no task no longer plays the standing task."""
    import torch

    from realgap.envs.eval.play import PlayRequest, resolve_policy_source
    from realgap.envs.run.run_dir import CheckpointError

    checkpoint = _run_folder(tmp_path)
    torch.save({"actor_state_dict": {}, "iter": 1}, checkpoint)  # what check_checkpoint looks for
    with pytest.raises(CheckpointError, match="names no task"):
        resolve_policy_source(PlayRequest(checkpoint=str(tmp_path)))
