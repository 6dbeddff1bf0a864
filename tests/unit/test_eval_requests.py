"""The library side of play.py, eval_checkpoints.py, push_headings.py and benchmark.py, called directly: every refusal
comes before an env is built, and the lines and files they produce are the ones the scripts print and write.

No simulator: shipped exports are read with onnxruntime, runs are folders of empty checkpoint files.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from realgap.envs.eval.bench.report import BenchRequest, check_sections, note, one_gpu_only, row, run_benchmark
from realgap.envs.eval.checkpoints import (
    CheckpointsRequest,
    checkpoints_to_evaluate,
    eval_checkpoints,
    time_to_balance_line,
    write_rows,
)
from realgap.envs.eval.play import PlayRequest, check_request, metric_lines, play, resolve_policy_source
from realgap.envs.eval.push.headings_run import (
    PushHeadingsRequest,
    default_out,
    push_headings,
    report_lines,
    variant_label,
)
from realgap.envs.eval.push.headings_run import check_request as check_push_request
from realgap.envs.run.run_dir import CheckpointError

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
BALANCE = REPO / "configs" / "policies" / "balance_g1"
GRASP = REPO / "configs" / "policies" / "grasp_franka"


# --- play --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "give one of --checkpoint RUN, --policy EXPORT_DIR or --zero_action"),
        ({"policy": "p", "zero_action": True}, "give one of --checkpoint RUN"),
        ({"checkpoint": "c", "policy": "p"}, "give one of --checkpoint RUN"),
        ({"policy": "p", "nominal_of": "e"}, "--nominal_of EXPORT_DIR goes with --zero_action"),
        ({"zero_action": True, "episode_s": 0.0}, "--episode_s must be > 0 s, got 0.0"),
        ({"zero_action": True, "episode_s": -1.0}, "--episode_s must be > 0 s, got -1.0"),
    ],
)
def test_play_refuses_a_bad_combination_before_anything_is_read(fields, message):
    with pytest.raises(ValueError, match=message):
        check_request(PlayRequest(**fields))
    with pytest.raises(ValueError, match=message):  # play() checks first: nothing is loaded or built
        play(PlayRequest(**fields))


def test_play_reads_the_task_from_an_export_or_a_run_and_refuses_a_missing_run(tmp_path):
    task, checkpoint, export = resolve_policy_source(PlayRequest(policy=str(BALANCE)))
    assert checkpoint is None and export[0].task == task and task.startswith("Realgap-Balance-G1")
    assert export[1] == BALANCE / "policy.onnx"
    assert resolve_policy_source(PlayRequest(zero_action=True, task="T")) == ("T", None, None)
    with pytest.raises(CheckpointError, match="does not exist"):
        resolve_policy_source(PlayRequest(checkpoint=str(tmp_path / "nope")))


def test_play_prints_every_metric_after_the_episode_count_with_its_interval():
    summary = [("episodes", 8, None), ("survival", 0.75, (0.41, 0.93)), ("time_to_fall_s", float("nan"), None)]
    assert metric_lines("Realgap-Balance-G1-Play-v0", "zero action", 8, 10.0, summary) == [
        "[realgap] Realgap-Balance-G1-Play-v0 | zero action | 8 episodes of 10 s",
        "[realgap] survival=0.750 (95 % CI 0.410-0.930)",
        "[realgap] time_to_fall_s=—",  # NaN: nothing fell
    ]


# --- eval_checkpoints --------------------------------------------------------------------------------------------


def _run(tmp_path: Path, iterations: list[int]) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    for it in iterations:
        (run / f"model_{it}.pt").touch()
    (run / "notes.txt").touch()  # not a checkpoint
    return run


def test_checkpoints_every_n_iterations_and_always_the_last(tmp_path):
    run = _run(tmp_path, [0, 50, 100, 120, 10])
    assert [it for it, _ in checkpoints_to_evaluate(run, 50)] == [0, 50, 100, 120]  # 120: the last, not a multiple
    assert [it for it, _ in checkpoints_to_evaluate(run, 1)] == [0, 10, 50, 100, 120]
    assert checkpoints_to_evaluate(run, 200)[-1][1] == run / "model_120.pt"
    with pytest.raises(ValueError, match="--every must be >= 1, got 0"):
        checkpoints_to_evaluate(run, 0)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        checkpoints_to_evaluate(_run(tmp_path / "empty", []), 1)
    with pytest.raises(CheckpointError, match="does not exist"):  # eval_checkpoints refuses it before an env
        eval_checkpoints(CheckpointsRequest(run=str(tmp_path / "nope")))


def test_time_to_balance_is_the_first_checkpoint_at_the_target_never_the_baseline():
    rows = [
        {"iteration": -1, "survival_rate": 1.0, "train_s": 0.0, "env_steps": 0},  # the zero action: not a checkpoint
        {"iteration": 0, "survival_rate": 0.5, "train_s": 30.0, "env_steps": 1536},
        {"iteration": 50, "survival_rate": 0.96, "train_s": 600.0, "env_steps": 78336},
        {"iteration": 100, "survival_rate": 0.99, "train_s": 1200.0, "env_steps": 155136},
    ]
    assert time_to_balance_line(rows, 0.95) == (
        "[realgap] time-to-balance: survival >= 0.95 first at iteration 50 after 600.0 s of training (10.0 min, "
        "78336 env steps)"
    )
    assert time_to_balance_line(rows, 0.995) == "[realgap] no checkpoint reached survival >= 0.995"


def test_checkpoint_rows_are_written_with_the_first_rows_header(tmp_path):
    rows = [
        {"iteration": -1, "policy": "zero action", "survival_rate": 0.25},
        {"iteration": 0, "policy": "model_0.pt", "survival_rate": 0.5},
    ]
    write_rows(tmp_path / "e.csv", rows)
    with open(tmp_path / "e.csv") as fh:
        read = list(csv.DictReader(fh))
    assert [r["policy"] for r in read] == ["zero action", "model_0.pt"] and read[1]["survival_rate"] == "0.5"


# --- push_headings -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"edges": "0.4,0.3"}, ValueError, "magnitude bin edges must be at least two increasing values"),
        ({"edges": "0.2,x"}, ValueError, "could not convert string to float"),
        ({"steps": 0}, ValueError, "--steps, --num_envs and --reflex_steps must be >= 1"),
        ({"reflex_steps": 0}, ValueError, "--steps, --num_envs and --reflex_steps must be >= 1"),
        ({"policy": str(GRASP)}, ValueError, "pushes are a balance measure"),
    ],
)
def test_push_headings_refuses_bad_input_before_an_env(fields, error, message):
    req = PushHeadingsRequest(**({"policy": str(BALANCE)} | fields))
    with pytest.raises(error, match=message):
        push_headings(req)


def test_push_headings_names_the_what_ifs_in_its_label_and_file():
    edges, meta, onnx = check_push_request(PushHeadingsRequest(policy=str(BALANCE)))
    assert edges == [0.2, 0.3, 0.35, 0.4] and "Balance" in meta.task and onnx.name == "policy.onnx"
    plain = PushHeadingsRequest(policy=str(BALANCE))
    assert variant_label(plain) == str(BALANCE)
    assert default_out(plain) == Path("runs/push_headings/balance_g1.json")
    what_if = PushHeadingsRequest(policy=str(BALANCE), zero_action=True, crouch=0.1, hip_reflex=0.5, reflex_steps=5)
    assert variant_label(what_if) == "zero action + crouch 0.1 rad + hip reflex 0.5 x 5"
    assert default_out(what_if) == Path("runs/push_headings/balance_g1_zero_action_crouch0.1_hip_reflex0.5x5.json")


def test_push_headings_report_lines():
    report = {
        "task": "T",
        "policy": "P",
        "summary": {"pushes": 10, "falls": 2, "sagittal_share_of_falls": 1.0},
        "stance_xi_ahead_of_ankles_m": {"mean": 0.031, "std": 0.004},
        "rows": [
            {
                "direction": "backward",
                "push_mps": [0.3, 0.35],
                "falls": 2,
                "pushes": 4,
                "fall_rate": 0.5,
                "ci95": [0.15, 0.85],
            }
        ],
    }
    assert report_lines(report) == [
        "[realgap] T | P | 10 pushes, 2 followed by a fall (1.00 of them sagittal)",
        "[realgap] standing (3 s, no pushes): ξ 3.1 ± 0.4 cm ahead of the ankles",
        "[realgap] backward 0.3-0.35 m/s  falls   2 / 4    0.50 (95 % CI 0.15-0.85)",
    ]


# --- benchmark ---------------------------------------------------------------------------------------------------


def test_benchmark_sections_and_rows():
    assert check_sections("env,mujoco") == {"env", "mujoco"}
    with pytest.raises(ValueError, match=r"unknown sections \['foo'\]; known: env, ppo, mujoco"):
        check_sections("env,foo")
    with pytest.raises(ValueError, match="unknown sections"):  # refused before torch, a task or a device is touched
        run_benchmark(BenchRequest(sections="foo", tasks="Realgap-Nope-v0", device="nope"))
    line = row("x env", 64, 1234.4, None, "env/bare = 0.950")
    assert line == f"{'x env':<44} {64:>6} {'1234':>14} {'':>16}  env/bare = 0.950"
    assert note("n").endswith("  n") and len(note("n")) == len(row("", "", None, None, "n"))
    assert not one_gpu_only("cpu")
    assert math.isclose(BenchRequest().action_std, 0.0) and BenchRequest().ppo_layouts[0] == "one_process"


# --- every flag of these scripts is a field of its request -----------------------------------------------------


@pytest.mark.parametrize(
    ("script", "request_class", "argv"),
    [
        ("play.py", "realgap.envs.eval.play:PlayRequest", ["--zero_action"]),
        ("eval_checkpoints.py", "realgap.envs.eval.checkpoints:CheckpointsRequest", ["--run", "r"]),
        ("push_headings.py", "realgap.envs.eval.push.headings_run:PushHeadingsRequest", ["--policy", "p"]),
        ("benchmark.py", "realgap.envs.eval.bench.report:BenchRequest", []),
        (
            "hidden_compare.py",
            "realgap.envs.eval.hidden_compare:HiddenCompareRequest",
            ["--policy", "p", "--against", "q"],
        ),
        ("sim2sim.py", "realgap.envs.sim2sim.isaac_vs_mujoco:Sim2SimRequest", ["--zero_action"]),
        ("train.py", "realgap.envs.run.training:TrainRequest", []),
        ("push_limit.py", "realgap.envs.eval.push.limit_run:PushLimitRequest", ["--policy", "p"]),
        (
            "score_identification.py",
            "realgap.envs.eval.identification_score:ScoreRequest",
            ["--policy", "p", "--spec", "s", "--hidden_seed", "3"],
        ),
        ("srbd.py", "realgap.envs.eval.srbd.run:SrbdRequest", ["--out", "o"]),
        ("identify.py", "realgap.envs.identify.run:IdentifyRequest", ["--log", "l", "--out", "o"]),
        ("plot_curve.py", "realgap.envs.eval.curve:CurveRequest", ["--run", "r", "--out", "o.png"]),
        ("compare_actions.py", "realgap.envs.eval.compare.run:CompareRequest", []),
        ("identify_engines.py", "realgap.envs.identify.engines:IdentifyEnginesRequest", ["--out", "o"]),
        ("solver_counts.py", "realgap.envs.eval.bench.solver_work:SolverCountsRequest", []),
        ("bench_dr.py", "realgap.envs.eval.bench.dr_cost:BenchDrRequest", []),
    ],
)
def test_each_scripts_flags_are_its_requests_fields_with_the_same_defaults(script, request_class, argv):
    # a flag added to a script without its field would fail Request(**vars(args)) at run time
    import dataclasses
    import importlib
    import runpy

    module, class_name = request_class.split(":")
    cls = getattr(importlib.import_module(module), class_name)
    args = vars(runpy.run_path(str(REPO / "scripts" / script))["parse_args"](argv))
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert set(args) == set(fields)
    cls(**args)
    given = {a[2:] for a in argv if a.startswith("--")}
    for name, field in fields.items():  # a flag left out keeps one default, whether the script or the library is asked
        if name in given:
            continue
        if field.default is not dataclasses.MISSING:
            assert args[name] == field.default, name
        elif field.default_factory is not dataclasses.MISSING:
            assert args[name] == field.default_factory(), name
