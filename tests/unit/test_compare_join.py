"""Unit tier: an action-space comparison keeps each run's training record beside its evaluation, and an earlier
comparison's runs join a new table only when made with the same budget and evaluation settings."""

import json
import math
from pathlib import Path

import pytest

from realgap.envs.eval.compare import plots as compare_plots
from realgap.envs.eval.compare import table as compare

pytestmark = pytest.mark.unit

SETTINGS = {
    "max_iterations": 3,
    "max_minutes": None,
    "num_envs": 8,
    "episodes": 4,
    "eval_envs": 4,
    "episode_s": None,
    "factors": ["object_mass_scale"],
    "values": [],
    "device": "cpu",
}


def _report(success: float) -> dict:
    point = {
        "value": 1.0,
        "success_rate": success,
        "success_ci95": [success / 2, (1 + success) / 2],
        "episodes": 4,
        "ended_by": {"joint_speed_reflex": 0.25},
    }
    return {
        "rates": {"physics_hz": 200, "control_hz": 200, "policy_hz": 50, "target_mode": "hold"},
        "action_space": {"low_level": "PD"},
        "factors": {"object_mass_scale": {"nominal": 1.0, "unit": "", "policies": {"ppo": [point]}}},
        "reference": {},
    }


def _run_dir(path: Path, iterations: int = 3, num_envs: int = 8) -> Path:
    (path / "params").mkdir(parents=True)
    rows = ["iteration,collect_s,learn_s,mean_reward,success_rate,reflex_rate"]
    rows += [f"{i},1.0,0.5,{i * 2.0},{0.1 * i},0.0" for i in range(iterations)]
    (path / "progress.csv").write_text("\n".join(rows) + "\n")
    (path / "params" / "run.json").write_text(json.dumps({"num_envs_total": num_envs}))
    (path / "params" / "agent.yaml").write_text("num_steps_per_env: 24\n")
    return path


def _comparison(folder: Path, settings: dict = SETTINGS, seed: int = 0, keep_record: bool = True) -> Path:
    """A comparison output folder as scripts/compare_actions.py writes it, one joint_pos run."""
    tag = f"joint_pos_s{seed}"
    (folder / "eval" / tag).mkdir(parents=True)
    (folder / "eval" / tag / "report.json").write_text(json.dumps(_report(0.5)))
    run = _run_dir(folder / "runs" / tag)
    if keep_record:
        compare.keep_training_record(run, folder / "eval" / tag / "run")
    rows = compare.table_rows([compare.RunResult("joint_pos", seed, run, 120.0, _report(0.5))])
    (folder / "comparison.json").write_text(json.dumps({"settings": settings, "rows": rows}))
    return folder


def test_an_earlier_comparison_rebuilds_the_same_rows_from_what_it_kept(tmp_path):
    folder = _comparison(tmp_path / "a")
    import shutil

    shutil.rmtree(folder / "runs")  # the run folders are gone: the kept record is enough
    (result,) = compare.load_comparison(folder, SETTINGS)
    assert (result.space, result.seed, result.train_wall_s) == ("joint_pos", 0, 120.0)
    (row,) = compare.table_rows([result])
    before = json.loads((folder / "comparison.json").read_text())["rows"][0]
    same = [json.dumps({k: v for k, v in r.items() if k != "run_dir"}, sort_keys=True) for r in (row, before)]
    assert same[0] == same[1]  # as JSON: NaN (no task-draw reference here) equals NaN
    assert row["iterations"] == 3 and row["num_envs"] == 8 and row["env_steps"] == 3 * 24 * 8
    assert math.isclose(row["success_rate"], 0.5) and math.isclose(row["train_success_rate"], 0.2)
    plot = compare_plots.plot_learning_curves([result], tmp_path / "curves.png")  # the learning curve comes back too
    assert plot.stat().st_size > 1024


def test_a_comparison_with_another_budget_or_evaluation_is_refused(tmp_path):
    folder = _comparison(tmp_path / "a", settings=SETTINGS | {"max_iterations": 200, "episodes": 32})
    with pytest.raises(ValueError, match=r"other settings \(max_iterations: 200 there, 3 here, episodes: 32 there"):
        compare.load_comparison(folder, SETTINGS)


def test_a_folder_that_is_not_a_comparison_or_kept_no_record_is_refused(tmp_path):
    with pytest.raises(ValueError, match="holds no comparison.json"):
        compare.load_comparison(tmp_path, SETTINGS)
    folder = _comparison(tmp_path / "old", keep_record=False)
    kept = "run/progress.csv, run/params/run.json, run/params/agent.yaml"
    with pytest.raises(ValueError, match=rf"run joint_pos_s0 keeps no {kept}"):
        compare.load_comparison(folder, SETTINGS)


def test_the_summary_pools_seeds_per_space_and_reports_each_seeds_speed(tmp_path):
    # two seeds of one space: 2/4 and 4/4 successes; training success (0.1 * i) crosses 0.4 at iteration 5, the
    # sixth, in one, never in the other (3 iterations stay <= 0.2)
    fast = _run_dir(tmp_path / "fast", iterations=8)
    slow = _run_dir(tmp_path / "slow", iterations=3)
    results = [
        compare.RunResult("joint_pos", 0, fast, 60.0, _report(0.5)),
        compare.RunResult("joint_pos", 1, slow, 180.0, _report(1.0)),
        compare.RunResult("joint_vel", 0, slow, 120.0, _report(0.25)),
    ]
    rows = compare.table_rows(results)
    assert rows[0]["steps_to_first_success"] == 2 * 24 * 8  # iteration 1 logs 0.1 > 0
    assert rows[0]["steps_to_train_success_0.4"] == 6 * 24 * 8 and math.isnan(rows[1]["steps_to_train_success_0.4"])
    pos, vel = compare.summary_rows(rows)
    assert (pos["action_space"], pos["seeds"], pos["successes"], pos["episodes"]) == ("joint_pos", [0, 1], 6, 8)
    assert pos["success_per_seed"] == [0.5, 1.0] and math.isclose(pos["success_pooled"], 0.75)
    assert pos["success_pooled_ci95_lo"] < 0.75 < pos["success_pooled_ci95_hi"]
    learned = pos["steps_to_train_success_0.4_per_seed"]
    assert len(learned) == 2 and learned[0] == 6 * 24 * 8 and math.isnan(learned[1])
    assert math.isclose(pos["train_min_mean"], 2.0) and math.isclose(pos["speed_reflex_rate_eval"], 0.25)
    assert (vel["seeds"], vel["successes"], vel["episodes"]) == ([0], 1, 4)
    table = compare.markdown(rows, ["object_mass_scale"])
    assert "| `joint_pos` | 0, 1 | 75 % (" in table and ", 6/8) | 50 % / 100 % | 0.00 M / never |" in table
    assert "| `joint_vel` | 0 | 25 % (" in table and "Per run:" in table


def test_a_run_in_two_included_folders_is_refused_before_anything_is_written(tmp_path):
    import runpy

    main = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "compare_actions.py"))["main"]
    a = _comparison(tmp_path / "a")
    b = _comparison(tmp_path / "b")  # the same joint_pos_s0 again: pooling it twice would double its episodes
    argv = [
        "--seeds",
        "none",
        "--include",
        str(a),
        "--include",
        str(b),
        "--out",
        str(tmp_path / "out"),
        "--max_iterations",
        "3",
        "--num_envs",
        "8",
        "--episodes",
        "4",
        "--eval_envs",
        "4",
        "--factors",
        "object_mass_scale",
        "--device",
        "cpu",
    ]
    with pytest.raises(ValueError, match="joint_pos_s0 are in more than one --include folder"):
        main(argv)
    assert not (tmp_path / "out").exists()


def test_a_rebuild_copies_every_included_run_into_its_own_folder(tmp_path):
    import runpy

    main = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "compare_actions.py"))["main"]
    a = _comparison(tmp_path / "a")
    b = _comparison(tmp_path / "b", seed=1)  # another sitting: joint_pos seed 1
    out = tmp_path / "out"
    argv = [
        "--seeds",
        "none",
        "--include",
        str(a),
        "--include",
        str(b),
        "--out",
        str(out),
        "--max_iterations",
        "3",
        "--num_envs",
        "8",
        "--episodes",
        "4",
        "--eval_envs",
        "4",
        "--factors",
        "object_mass_scale",
        "--device",
        "cpu",
    ]
    main(argv)
    import shutil

    shutil.rmtree(a)
    shutil.rmtree(b)  # the sittings are gone: the joined folder must still hold both runs
    rows = json.loads((out / "comparison.json").read_text())["rows"]
    assert [(r["action_space"], r["seed"]) for r in rows] == [("joint_pos", 0), ("joint_pos", 1)]
    assert all(Path(r["run_dir"]) == out / "eval" / f"joint_pos_s{r['seed']}" / "run" for r in rows)
    settings = json.loads((out / "comparison.json").read_text())["settings"]
    assert len(compare.load_comparison(out, settings)) == 2  # it joins a later rebuild on its own


def test_the_contact_columns_average_the_last_quarter_of_training(tmp_path):
    """A run that never lifts still says where it stands: the share of its training steps in each contact mode over
    the last quarter of iterations (8 iterations: the last 2; a record without the columns gives NaN)."""
    run = _run_dir(tmp_path / "a", iterations=8)
    rows = [
        "iteration,collect_s,learn_s,mean_reward,success_rate,reflex_rate,mode_no_contact,mode_sticking,mode_sliding"
    ]
    rows += [f"{i},1.0,0.5,1.0,0.0,0.0,{1 - 0.1 * i:.2f},{0.1 * i:.2f},0.0" for i in range(8)]
    (run / "progress.csv").write_text("\n".join(rows) + "\n")
    (row,) = compare.table_rows([compare.RunResult("joint_pos", 0, run, 1.0, _report(0.0))])
    assert row["late_no_contact"] == pytest.approx((0.4 + 0.3) / 2)
    assert row["late_sticking"] == pytest.approx((0.6 + 0.7) / 2) and row["late_sliding"] == 0.0
    assert "35 % / 65 % / 0 %" in compare.markdown([row], ["object_mass_scale"])
    (bare,) = compare.table_rows([compare.RunResult("joint_pos", 0, _run_dir(tmp_path / "b"), 1.0, _report(0.0))])
    assert all(math.isnan(bare[f"late_{m}"]) for m in compare.LATE_MODES)


def test_the_stage_columns_say_how_far_a_run_that_never_lifts_got(tmp_path):
    """The grasp, first-millimetre and lift reward terms over the last quarter: a run that pinches
    but never lifts (grasp high, lift zero) reads apart from one that lifts; a record from before progress.csv had
    reward columns gives NaN and a dash, not a zero."""
    run = _run_dir(tmp_path / "a", iterations=4)
    rows = ["iteration,collect_s,learn_s,mean_reward,success_rate,reward_grasp,reward_grasped_lift,reward_lift"]
    rows += [f"{i},1.0,0.5,1.0,0.0,{0.5 * i:.2f},0.1,0.0" for i in range(4)]
    (run / "progress.csv").write_text("\n".join(rows) + "\n")
    (row,) = compare.table_rows([compare.RunResult("joint_pos", 0, run, 1.0, _report(0.0))])
    assert row["late_reward_grasp"] == pytest.approx(1.5)  # 4 iterations: the last one
    assert row["late_reward_grasped_lift"] == pytest.approx(0.1) and row["late_reward_lift"] == 0.0
    assert "| 1.50 / 0.10 / 0.00 |" in compare.markdown([row], ["object_mass_scale"])
    (bare,) = compare.table_rows([compare.RunResult("joint_pos", 0, _run_dir(tmp_path / "b"), 1.0, _report(0.0))])
    assert all(math.isnan(bare[f"late_reward_{t}"]) for t in compare.LATE_REWARDS)
    assert "| – / – / – |" in compare.markdown([bare], ["object_mass_scale"])
