"""Export a trained policy for a robot: ONNX and TorchScript with the full metadata, written all-or-nothing.

The networks come from rsl-rl-lib's own exporters (``export_policy_to_onnx`` / ``export_policy_to_jit``: the
observation normalizer is folded into the graph, batch 1, deterministic mean action). realgap then

- checks the metadata against the format's JSON Schema (``realgap.policy/2``, :mod:`realgap.envs.format.schema`) and
  its own JSON round trip, before anything is written;
- loads the ONNX model with its external weight file and saves it as **one self-contained file** (the MLP is small),
  with the metadata JSON in ``metadata_props["realgap_metadata"]`` plus a few flat keys for model viewers;
- re-saves the TorchScript module with the metadata as the extra file ``realgap_metadata.json``;
- writes the same metadata as ``policy.json``, seals the ONNX file with the integrity digest over metadata and graph
  (:mod:`realgap.envs.format.integrity`) and writes ``SHA256SUMS`` over both files;
- checks that onnxruntime and torch agree on random observations.

Everything is written into a staging folder beside the target and swapped in only when complete, so a failure
leaves the previous export (or nothing) and never a mix. Metadata: :mod:`realgap.envs.export.metadata`; upgrading a
``realgap.policy/1`` export without its checkpoint: :mod:`realgap.envs.export.upgrade`.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.export.actions import ExportError
from realgap.envs.export.metadata import policy_metadata
from realgap.envs.format.integrity import INTEGRITY_KEY, SUMS_FILE, digest, onnx_graph_bytes, sums_text
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.format.provenance import repo_relative
from realgap.envs.format.schema import FORMAT, ONNX_METADATA_KEY, MetadataError, validate
from realgap.envs.format.verify import contact_problems_of
from realgap.envs.run.run_dir import check_checkpoint, latest_checkpoint, run_task
from realgap.envs.run.run_record import policy_settings

ONNX_FILE, TORCHSCRIPT_FILE, METADATA_FILE = "policy.onnx", "policy.pt", "policy.json"
EXPORT_DIR = "realgap_export"
"""A run's default export folder, ``<run>/realgap_export``: not ``exported/``, where Isaac Lab's ``isaaclab play``
writes its own ``policy.onnx`` / ``policy.pt`` (no metadata), so neither tool overwrites the other's files."""


@dataclass(frozen=True)
class ExportResult:
    """Where the export went and how well the two formats agree.

    Attributes:
        folder: Export folder holding ``policy.onnx``, ``policy.pt`` and ``policy.json``.
        max_abs_diff: Largest |onnxruntime − torch| action difference over the check observations.
        num_checked: Number of random observations compared.
    """

    folder: Path
    max_abs_diff: float
    num_checked: int


def training_record(checkpoint: Path, iteration: int) -> dict[str, Any]:
    """Provenance of a checkpoint: its path and iteration, the run's git state and command line (``params/run.json``)
    and the export time. Paths are relative to the repository (:func:`repo_relative`): the same on every machine."""
    run_json = checkpoint.parent / "params" / "run.json"
    run = json.loads(run_json.read_text()) if run_json.is_file() else {}
    return {
        "checkpoint": repo_relative(checkpoint.resolve()),
        "iteration": iteration,
        "run_dir": repo_relative(checkpoint.parent.resolve()),
        "git": run.get("git", {}),
        "argv": [repo_relative(a) for a in run.get("argv", [])],
        "resumes": run.get("resumes", []),
        "device": run.get("device"),
        "dr_profile": run.get("dr_profile"),
        "actuator_model": run.get("actuator_model", "chain"),
        "exported_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def checked_json(meta: PolicyMetadata) -> str:
    """``meta`` as the JSON an export writes, after checking it against the schema and its own round trip.

    Raises:
        ExportError: The metadata violates the schema (the field named), does not read back as itself, or records
            contact parameters the verifying loader refuses (:func:`~realgap.envs.format.verify.contact_problems_of`).
    """
    data = meta.to_dict()
    try:
        validate(data, "the exported metadata")
        back = PolicyMetadata.from_dict(data, "the exported metadata")
    except MetadataError as err:
        raise ExportError(str(err)) from err
    if back != meta:
        raise ExportError("the exported metadata does not read back as itself (a field the JSON form loses)")
    if problems := contact_problems_of(meta):  # the verifying loader would refuse it
        raise ExportError("the exported contact parameters break the engine's rules:\n  - " + "\n  - ".join(problems))
    return meta.to_json()


def onnx_properties(meta: PolicyMetadata) -> dict[str, str]:
    """``metadata_props`` of the ONNX file: the full metadata JSON and flat keys a model viewer shows at a glance."""
    r = meta.rates
    return {
        ONNX_METADATA_KEY: checked_json(meta),
        "format": FORMAT,
        "task": meta.task,
        "robot": meta.robot.name,
        "robot_description_sha256": meta.robot.description_sha256,
        "joint_names": ",".join(meta.joint_names),
        "action": ", ".join(f"{t.name} [{t.start}:{t.stop}] {t.type}" for t in meta.actions.terms)
        + " (equations in realgap_metadata.actions)",
        "rates": f"physics {r.physics_hz:g} Hz, servo {r.control_hz:g} Hz, policy {r.policy_hz:g} Hz, {r.target_mode}",
        "training_commit": str(meta.training.get("git", {}).get("commit", "")),
    }


def seal(folder: Path) -> dict[str, str]:
    """Write the integrity digest into ``folder``'s ``policy.onnx`` (``metadata_props``, graph untouched) and
    ``SHA256SUMS`` over ``policy.json`` and ``policy.onnx``; return the digest.

    Raises:
        ExportError: The ONNX file holds no metadata, or its graph changed while the digest was added.
    """
    import onnx

    path = folder / ONNX_FILE
    graph = onnx_graph_bytes(path.read_bytes())
    model = onnx.load(str(path))
    props = {p.key: p.value for p in model.metadata_props}
    if ONNX_METADATA_KEY not in props:
        raise ExportError(f"{path} holds no '{ONNX_METADATA_KEY}' metadata to seal")
    record = digest(json.loads(props[ONNX_METADATA_KEY]), graph)
    kept = [(p.key, p.value) for p in model.metadata_props if p.key != INTEGRITY_KEY]
    del model.metadata_props[:]
    for key, value in [*kept, (INTEGRITY_KEY, json.dumps(record))]:
        model.metadata_props.add(key=key, value=value)
    onnx.save_model(model, str(path), save_as_external_data=False)
    if onnx_graph_bytes(path.read_bytes()) != graph:
        raise ExportError("internal: the ONNX graph changed while its digest was added")
    (folder / SUMS_FILE).write_text(sums_text(folder))
    return record


def _export_onnx(runner: Any, meta: PolicyMetadata, folder: Path) -> Path:
    import onnx

    runner.export_policy_to_onnx(str(folder), "raw.onnx")
    model = onnx.load(str(folder / "raw.onnx"))  # pulls the weights in from raw.onnx.data
    graph = model.graph
    (inp,), (out,) = graph.input, graph.output
    in_dim = inp.type.tensor_type.shape.dim[-1].dim_value
    out_dim = out.type.tensor_type.shape.dim[-1].dim_value
    if (inp.name, in_dim, out.name, out_dim) != (meta.input_name, meta.obs_dim, meta.output_name, meta.action_dim):
        raise ExportError(
            f"the ONNX graph maps {inp.name}[{in_dim}] -> {out.name}[{out_dim}], the metadata says "
            f"{meta.input_name}[{meta.obs_dim}] -> {meta.output_name}[{meta.action_dim}]"
        )
    del model.metadata_props[:]
    for key, value in onnx_properties(meta).items():
        model.metadata_props.add(key=key, value=value)
    model.doc_string = f"realgap policy for {meta.task} ({meta.robot.name}); metadata in '{ONNX_METADATA_KEY}'"
    onnx.checker.check_model(model)
    path = folder / ONNX_FILE
    onnx.save_model(model, str(path), save_as_external_data=False)
    for leftover in folder.glob("raw.onnx*"):
        leftover.unlink()
    return path


def _load_torchscript(path: Path) -> Any:
    """``torch.jit.load`` on the CPU. torch 2.11 deprecates TorchScript; rsl-rl still exports it (the libtorch
    deployment format), so realgap reads it back without the warning."""
    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.load` is deprecated", category=DeprecationWarning)
        return torch.jit.load(str(path), map_location="cpu")


def _export_torchscript(runner: Any, meta: PolicyMetadata, folder: Path) -> Path:
    import torch

    runner.export_policy_to_jit(str(folder), "raw.pt")
    module = _load_torchscript(folder / "raw.pt")
    path = folder / TORCHSCRIPT_FILE
    torch.jit.save(module, str(path), _extra_files={f"{ONNX_METADATA_KEY}.json": checked_json(meta)})
    (folder / "raw.pt").unlink()
    return path


def compare_onnx_torch(folder: str | Path, obs: np.ndarray) -> float:
    """Largest |onnxruntime − TorchScript| over the actions of ``obs``, one row at a time (the graph is batch 1).

    Shape:
        ``obs`` ``(N, D)``.
    """
    import onnxruntime as ort
    import torch

    folder = Path(folder)
    session = ort.InferenceSession(str(folder / ONNX_FILE), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    module = _load_torchscript(folder / TORCHSCRIPT_FILE)
    worst = 0.0
    with torch.inference_mode():
        for row in np.asarray(obs, dtype=np.float32):
            a_onnx = session.run(None, {name: row[None, :]})[0]
            a_torch = module(torch.from_numpy(row[None, :])).numpy()
            worst = max(worst, float(np.abs(a_onnx - a_torch).max()))
    return worst


def export_policy(
    runner: Any, meta: PolicyMetadata, out_dir: str | Path, *, num_checks: int = 64, seed: int = 0
) -> ExportResult:
    """Write ``policy.onnx``, ``policy.pt`` and ``policy.json`` of ``runner``'s actor into ``out_dir``.

    Args:
        runner: An rsl-rl ``OnPolicyRunner`` holding the trained actor.
        meta: The policy's metadata (:func:`realgap.envs.export.metadata.policy_metadata`).
        out_dir: Export folder; replaced as a whole when the export succeeds.
        num_checks: Random observations (standard normal) on which ONNX and TorchScript are compared.
        seed: Seed of those observations.

    Raises:
        ExportError: The exported graph disagrees with the metadata.
    """
    text = checked_json(meta)  # refuse invalid metadata before anything is written
    out_dir = Path(out_dir)
    diff = 0.0

    def write(stage: Path) -> None:
        nonlocal diff
        _export_onnx(runner, meta, stage)
        _export_torchscript(runner, meta, stage)
        (stage / METADATA_FILE).write_text(text)
        seal(stage)
        obs = np.random.default_rng(seed).standard_normal((num_checks, meta.obs_dim)).astype(np.float32)
        diff = compare_onnx_torch(stage, obs)

    replace_folder(out_dir, write)
    return ExportResult(out_dir, diff, num_checks)


def replace_folder(out_dir: Path, write: Callable[[Path], None]) -> None:
    """Fill a staging folder beside ``out_dir`` with ``write(stage)`` and swap it in for ``out_dir`` only when
    ``write`` returns: a failure leaves ``out_dir`` as it was (or absent), never a mix."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-staging-", dir=out_dir.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(stage, 0o777 & ~umask)  # mkdtemp makes it private; the export is an ordinary folder
    try:
        write(stage)
        old = out_dir.with_name(f".{out_dir.name}-old-{os.getpid()}")
        if out_dir.exists():
            os.rename(out_dir, old)
        try:
            os.rename(stage, out_dir)
        except OSError:
            if old.exists():  # put the previous export back
                os.rename(old, out_dir)
            raise
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def export_checkpoint(
    checkpoint: str | Path,
    task: str | None = None,
    out: str | Path | None = None,
    device: str | None = "cpu",
    num_checks: int = 64,
) -> tuple[PolicyMetadata, ExportResult, int]:
    """Build the task's training env (1 env), load ``checkpoint`` and export it with its metadata.

    Args:
        checkpoint: A run folder (its latest ``model_<it>.pt``) or a checkpoint file.
        task: Task id; ``None`` reads it from the run's record, realgap's or Isaac Lab's
            (:func:`~realgap.envs.run.run_dir.run_task`).
        out: Export folder; ``None`` is ``<run>/realgap_export`` (:data:`EXPORT_DIR`).
        device: Device for building the env and loading the checkpoint.
        num_checks: Random observations on which ONNX and TorchScript are compared.

    Returns:
        The metadata, the export result and the checkpoint's training iteration.

    Raises:
        CheckpointError: No checkpoint there, or no task known (:func:`~realgap.envs.run.run_dir.run_task`).
        ExportError: The env cannot be described.
    """
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.run.runner import RealgapRunner

    path = Path(checkpoint)
    checkpoint = path if path.is_file() else latest_checkpoint(path)
    check_checkpoint(checkpoint)
    task = task or run_task(checkpoint)  # realgap's or isaaclab train's record; none is refused
    out = Path(out) if out else checkpoint.parent / EXPORT_DIR
    # The training variant (not Play): the metadata records the observation noise the policy was trained with.
    env_cfg, agent_cfg = load_cfgs(task, device, num_envs=1)
    policy_settings(checkpoint).apply(env_cfg, agent_cfg)  # the run's rates and interface overrides
    with simulation(env_cfg):
        from isaaclab.utils import to_dict
        from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper, check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        wrapped = RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions)
        runner = RealgapRunner(wrapped, to_dict(agent_cfg), log_dir=None, device=agent_cfg.device)
        runner.load(str(checkpoint))
        iteration = runner.current_learning_iteration - 1  # load() continues after the saved iteration
        actor_groups = list(runner.alg.get_policy().obs_groups)
        meta = policy_metadata(
            env, task, actor_groups, training_record(checkpoint, iteration), raw_action_clip=agent_cfg.clip_actions
        )
        result = export_policy(runner, meta, out, num_checks=num_checks)
        env.close()
    return meta, result, iteration
