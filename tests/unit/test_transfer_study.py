"""Unit tests of the transfer study (realgap.envs.eval.study, scripts/transfer_study.py): the arm table against the
page's profiles, the bad-input messages, each step's command and artifact test, and the summary on hand-made
per-seed results with hand-computed values."""

import json
import runpy
import shutil
import sys
from pathlib import Path

import pytest

from realgap.envs.dr.profile import load_dr_profile
from realgap.envs.eval.study import steps
from realgap.envs.eval.study.arms import LEFT_OUT, TASKS, parse_arms, parse_study_seeds, task_spec
from realgap.envs.eval.study.run import (
    REQUEST_FILE,
    StudyRequest,
    check_request,
    deviations,
    record_sitting,
    run_study,
    sharing_note,
)
from realgap.envs.eval.study.steps import Budget, Pair, StepFailed, command, done, find_run, run_pair
from realgap.envs.eval.study.summary import study_summary

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
BALANCE = TASKS["balance"]
RULES = Budget("balance", "cpu", 150, None, 256, None, 4)


# --- the arm table -------------------------------------------------------------------------------------------------


def test_every_arm_trains_a_profile_of_its_task_and_the_page_order():
    for name, spec in TASKS.items():
        assert len({a.id for a in spec.arms}) == len(spec.arms)
        for arm in spec.arms:
            profile = load_dr_profile(arm.dr_profile)  # loads and validates
            assert profile.task in (None, name), (name, arm.id, profile.task)  # None: the profile serves both
        assert not set(LEFT_OUT[name]) & {a.id for a in spec.arms}
    assert [a.id for a in BALANCE.arms] == ["a", "b", "c0", "c", "d", "e", "f", "g", "h", "gh", "hw", "gm", "gho"]
    assert [a.id for a in TASKS["grasp"].arms] == ["a", "b", "c0", "c", "d", "e", "g", "h", "hw"]
    # (a) is Isaac Lab's implicit PD, (b) the chain without its delay, (g) all of it
    assert load_dr_profile(BALANCE.arm("a").dr_profile).actuator_model == "implicit_pd"
    assert load_dr_profile(BALANCE.arm("b").dr_profile).actuator_model == "chain_no_delay"
    assert (BALANCE.arm("g").dr_profile, TASKS["grasp"].arm("g").dr_profile) == ("nominal", "grasp_nominal")
    assert load_dr_profile(BALANCE.arm("hw").dr_profile).width_curriculum is not None  # (h) under item 3's lever
    assert load_dr_profile(TASKS["grasp"].arm("hw").dr_profile).width_curriculum.signal == "success"  # the grasp's
    assert load_dr_profile(BALANCE.arm("gh").dr_profile).holding_drive_fraction == 0.25  # (g) + the holding bridge
    # (gh) with targets about the measured joint positions: the same profile, one override, no other arm has one
    assert (BALANCE.arm("gm").dr_profile, BALANCE.arm("gm").overrides) == (
        "nominal_holding",
        ("env.actions.joint_pos.relative_to=measured",),
    )
    # (gh) with a 4-step observation history (the runtime's history: tests/sim/test_export_metadata.py)
    assert BALANCE.arm("gho").overrides == ("env.observations.policy.history_length=4",)
    assert [a.id for spec in TASKS.values() for a in spec.arms if a.overrides] == ["gm", "gho"]
    assert (BALANCE.task_id, BALANCE.max_iterations, BALANCE.num_procs) == ("Realgap-Balance-G1-Crouch-v0", 150, 1)
    grasp = TASKS["grasp"]
    assert (grasp.task_id, grasp.max_iterations, grasp.num_procs) == ("Realgap-Grasp-Franka-EEPoseDelta-v0", 450, 2)
    for spec in TASKS.values():
        assert (steps.SUITE_DIR / spec.suite).is_file()


@pytest.mark.parametrize(
    ("task", "arms", "message"),
    [
        (
            "balance",
            "a,z",
            "--arms 'a,z': unknown arm 'z' for balance; known: a, b, c0, c, d, e, f, g, h, gh, hw, gm, gho",
        ),
        ("balance", "a,i", "arm (i) (identify-then-train) is not run by this command"),
        ("grasp", "z", "--arms 'z': unknown arm 'z' for grasp; known: a, b, c0, c, d, e, g, h, hw"),
        ("grasp", "f", "grasp arm (f) is arm (g)"),
        ("balance", "a,a", "--arms 'a,a' lists a more than once"),
        ("balance", "a,", "--arms 'a,': an empty arm id"),
    ],
)
def test_bad_arms_are_refused_naming_them(task, arms, message):
    with pytest.raises(ValueError, match="^") as err:
        parse_arms(TASKS[task], arms)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        ("1,x", "'x' is not an integer >= 0"),
        ("0,1", "0 outside 1-999"),
        ("1000", "1000 outside 1-999"),
        ("2,2", "lists 2 more than once"),
        ("none", "trains nothing"),
    ],
)
def test_bad_seeds_are_refused_naming_them(seeds, message):
    with pytest.raises(ValueError) as err:
        parse_study_seeds(seeds)
    assert message in str(err.value)
    assert parse_study_seeds("3,1,2") == [3, 1, 2]


def test_an_unknown_task_is_refused_by_the_library_and_the_command_line(capsys):
    with pytest.raises(ValueError, match="--task 'walk' is not a task of the transfer study; known: balance, grasp"):
        task_spec("walk")
    parse_args = runpy.run_path(str(REPO / "scripts" / "transfer_study.py"))["parse_args"]
    with pytest.raises(SystemExit) as err:
        parse_args(["--task", "walk", "--out", "x"])
    assert err.value.code == 2 and "--task invalid choice: 'walk'" in capsys.readouterr().err


def test_the_scripts_flags_are_the_requests_fields_with_the_same_defaults():
    import dataclasses

    args = vars(
        runpy.run_path(str(REPO / "scripts" / "transfer_study.py"))["parse_args"](["--task", "grasp", "--out", "o"])
    )
    fields = {f.name: f for f in dataclasses.fields(StudyRequest)}
    assert set(args) == set(fields)
    for name, field in fields.items():
        if name not in ("task", "out"):
            assert args[name] == field.default, name


# --- the request and its folder ------------------------------------------------------------------------------------


def test_a_folder_of_another_request_is_refused_naming_what_differs_and_left_as_it_was(tmp_path):
    out = tmp_path / "study"
    spec, pairs, budget = check_request(StudyRequest(task="balance", out=str(out), device="cpu"))
    assert [p.tag for p in pairs] == [f"{a}_s{s}" for a in "abgh" for s in (1, 2, 3)]
    assert budget == RULES and deviations(spec, budget) == []
    out.mkdir()
    record_sitting(out, Budget("balance", "cpu", 2, 4, 4, 1, 1), StudyRequest(task="balance", out=str(out)))
    before = (out / REQUEST_FILE).read_text()
    with pytest.raises(ValueError) as err:
        check_request(StudyRequest(task="balance", out=str(out), device="cpu"))
    assert f"--out {out} holds a study of another request" in str(err.value)
    assert "max_iterations 2 (asked: 150)" in str(err.value) and "num_envs 4 (asked: None)" in str(err.value)
    assert (out / REQUEST_FILE).read_text() == before and sorted(p.name for p in out.iterdir()) == [REQUEST_FILE]
    smoke = Budget("balance", "cpu", 2, 4, 4, 1, 1)
    assert deviations(BALANCE, smoke) == [
        "--max_iterations 2 (the study: 150)",
        "--num_envs 4 (the study: default)",
        "--play_episodes 4 (the study: 256)",
        "--suite_robots 1 (the study: default)",
        "--suite_episodes 1 (the study: 4)",
    ]


def test_summarize_only_needs_a_study_and_a_foreign_folder_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no study there"):
        check_request(StudyRequest(task="balance", out=str(tmp_path / "none"), device="cpu", summarize_only=True))
    (tmp_path / "other" / "x.txt").parent.mkdir()
    (tmp_path / "other" / "x.txt").write_text("kept")
    with pytest.raises(ValueError, match="holds no study"):
        check_request(StudyRequest(task="balance", out=str(tmp_path / "other"), device="cpu"))
    assert (tmp_path / "other" / "x.txt").read_text() == "kept"


# --- one (arm, seed): commands and artifacts -----------------------------------------------------------------------


def _touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_new_run_trains_with_the_arms_profile_and_a_stopped_one_resumes_its_furthest_folder(tmp_path):
    pair = Pair(BALANCE.arm("a"), 1, tmp_path)

    def args(step: str, budget: Budget = RULES) -> str:
        cmd = command(pair, step, BALANCE, budget)
        assert cmd[:2] == [sys.executable, str(REPO / "scripts" / f"{steps.SCRIPTS[step]}.py")]
        return " ".join(cmd[2:])

    assert args("train") == (
        "--task Realgap-Balance-G1-Crouch-v0 --dr_profile ablation_a --seed 1 --max_iterations 150 "
        f"--log_root {tmp_path / 'runs'} --run_name a_s1 --device cpu"
    )
    measured = command(Pair(BALANCE.arm("gm"), 1, tmp_path), "train", BALANCE, RULES)
    assert measured[-2:] == ["--set", "env.actions.joint_pos.relative_to=measured"]
    grasp = command(Pair(TASKS["grasp"].arm("g"), 2, tmp_path), "train", TASKS["grasp"], RULES)
    assert grasp[grasp.index("--num_procs") + 1] == "2" and grasp[grasp.index("--dr_profile") + 1] == "grasp_nominal"
    gpu = Budget("grasp", "cuda:0", 450, 4096, 256, None, 4)  # one process per GPU arm, 4096 envs
    grasp = command(Pair(TASKS["grasp"].arm("g"), 2, tmp_path), "train", TASKS["grasp"], gpu)
    assert "--num_procs" not in grasp and grasp[-2:] == ["--num_envs", "4096"] and deviations(TASKS["grasp"], gpu) == []
    runs = tmp_path / "runs" / "balance_g1"
    _touch(runs / "2026-12-06_10-00-00_a_s1" / "model_50.pt")  # stopped at its second checkpoint
    (runs / "2026-12-06_11-00-00_a_s1").mkdir()  # stopped before its first: trained again, kept
    _touch(runs / "2026-12-06_12-00-00_ca_s1" / "model_149.pt")  # another tag's run
    assert find_run(pair) == runs / "2026-12-06_10-00-00_a_s1"
    assert not done(pair, "train", RULES)
    assert args("train") == f"--resume {runs / '2026-12-06_10-00-00_a_s1'} --device cpu"
    _touch(runs / "2026-12-06_10-00-00_a_s1" / "model_149.pt")  # its last checkpoint: model_<150 - 1>.pt
    assert done(pair, "train", RULES)
    last = runs / "2026-12-06_10-00-00_a_s1" / "model_149.pt"
    assert args("export") == f"--checkpoint {last} --out {tmp_path / 'exports' / 'a_s1'} --device cpu"
    assert args("play") == (
        f"--checkpoint {last} --episodes 256 --seed 0 --no_export --json {tmp_path / 'play' / 'a_s1.partial.json'} "
        "--device cpu"
    )
    assert args("suite") == (
        f"--policy {tmp_path / 'exports' / 'a_s1'} --suite {REPO / 'configs' / 'suites' / 'g1_v1.yaml'} "
        f"--episodes 4 --out {tmp_path / 'suite' / 'a_s1'}"
    )
    smoke = Budget("balance", "cpu", 2, 4, 4, 1, 1)
    assert args("play", smoke).endswith("--num_envs 4")  # one env per episode
    assert args("suite", smoke).endswith("--robots 1")


def test_a_pair_whose_artifacts_exist_runs_nothing_and_a_failed_step_keeps_its_record(tmp_path, monkeypatch):
    pair = Pair(BALANCE.arm("b"), 2, tmp_path)
    _touch(tmp_path / "runs" / "balance_g1" / "2026-12-06_10-00-00_b_s2" / "model_149.pt")
    _touch(pair.export / "policy.json")
    assert not done(pair, "export", RULES)  # the ONNX file too
    _touch(pair.export / "policy.onnx")
    _touch(pair.play, "{}")
    _touch(pair.suite / "summary.json")
    assert not done(pair, "suite", RULES)  # episodes.csv is written last
    _touch(pair.suite / "episodes.csv")
    assert run_pair(pair, BALANCE, RULES, say=lambda _: None) == []
    assert not pair.timing.exists() and not (tmp_path / "logs").exists()
    pair.play.unlink()
    fail = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    monkeypatch.setattr(steps, "command", lambda *args: fail)
    with pytest.raises(StepFailed) as err:
        run_pair(pair, BALANCE, RULES, say=lambda _: None)
    assert "b_s2: play failed (exit 3)" in str(err.value) and "boom" in str(err.value)
    attempt = json.loads(pair.timing.read_text())["play"][0]
    assert attempt["exit"] == 3 and attempt["wall_s"] > 0 and attempt["cpu_s"] >= 0
    assert (pair.export / "policy.onnx").is_file()  # nothing made before is lost


# --- the summary on hand-made seeds --------------------------------------------------------------------------------


def _artifacts(out: Path, arm: str, seed: int, suite: float, play: float, n: int = 100) -> None:
    """A finished pair: Play over n episodes, suite over n (two families of n/2: suite ± 0.2, pooled = suite)."""
    _touch(out / "play" / f"{arm}_s{seed}.json", json.dumps({"episodes": n, "summary": {"survival": {"value": play}}}))
    fam = {
        f: {"rate": suite + d, "wilson95": [0, 1], "episodes": n // 2} for f, d in (("typical", 0.2), ("worn", -0.2))
    }
    pooled = {"rate": suite, "wilson95": [suite - 0.1, suite + 0.1], "episodes": n}
    _touch(out / "suite" / f"{arm}_s{seed}" / "summary.json", json.dumps({"all": pooled, "families": fam}))
    _touch(out / "timing" / f"{arm}_s{seed}.json", json.dumps({"train": [{"wall_s": 60.0, "cpu_s": 50.0}] * 2}))


def _study(tmp_path: Path) -> Path:
    out = tmp_path / "study"
    out.mkdir()
    record_sitting(out, RULES, StudyRequest(task="balance", out=str(out)))
    for seed, (suite_a, suite_b) in enumerate([(0.5, 0.9), (0.6, 0.92), (0.7, 0.94)], start=1):
        _artifacts(out, "a", seed, suite_a, 0.9)
        _artifacts(out, "b", seed, suite_b, 0.9)
    _artifacts(out, "g", 1, 0.8, 0.95)  # one seed
    _touch(out / "timing" / "h_s1.json", "{}")  # started, not finished
    return out


def test_the_summary_per_seed_per_arm_and_between_arms_against_hand_computed_values(tmp_path):
    out = _study(tmp_path)
    _, text, failures = run_study(StudyRequest(task="balance", out=str(out), device="cpu", summarize_only=True))
    assert failures == []
    study = json.loads((out / "study.json").read_text())
    assert study["is_study"] and study["deviations"] == [] and study["unfinished"] == ["h_s1"]
    first = study["seeds"][0]
    # Play 90/100, Wilson 95 %: centre (0.9 + 1.96²/200) / (1 + 1.96²/100) = 0.88521, half-width
    # 1.96 / 1.038416 · √(0.0009 + 1.96²/40000) = 0.059569 → 0.8256 to 0.9448; gap 0.9 − 0.5 = 0.4
    assert (first["arm"], first["seed"], first["suite"], first["play"]) == ("a", 1, 0.5, 0.9)
    assert first["play_lo"] == pytest.approx(0.8256, abs=1e-4) and first["play_hi"] == pytest.approx(0.9448, abs=1e-4)
    assert first["gap"] == pytest.approx(0.4) and first["suite_worn"] == pytest.approx(0.3)
    a, b, g = (study["arms"][k] for k in "abg")
    # arm a: 0.5, 0.6, 0.7: mean 0.6, s = 0.1, t₂ = 4.3027 → half 4.3027 · 0.1 / √3 = 0.24841
    assert a["suite"]["mean"] == pytest.approx(0.6)
    assert (a["suite"]["lo"], a["suite"]["hi"]) == pytest.approx((0.35159, 0.84841), abs=1e-5)
    # arm b: 0.9, 0.92, 0.94: s = 0.02 → half 4.3027 · 0.02 / √3 = 0.049683
    assert (b["suite"]["lo"], b["suite"]["hi"]) == pytest.approx((0.87032, 0.96968), abs=1e-5)
    assert a["gap"]["mean"] == pytest.approx(0.3) and b["gap"]["mean"] == pytest.approx(-0.02)
    assert a["families"]["typical"]["mean"] == pytest.approx(0.8)
    # floors, p(1−p)/m averaged: a (0.25 + 0.24 + 0.21)/3/100 = 0.7/300; b (0.09 + 0.0736 + 0.0564)/3/100 = 0.22/300
    assert a["suite_floor"] == pytest.approx(0.7 / 300) and b["suite_floor"] == pytest.approx(0.22 / 300)
    assert g["suite"]["lo"] is None and g["seeds"] == [1]  # one seed: no interval (NaN, written as null)
    # b − a: 0.32; var a 0.01/3 (above its floor), var b floored at 0.00073333/3; se = 0.059815,
    # Welch df = 2.2918, t = 3.8181 → 0.32 ± 0.22838 = 0.09162 to 0.54838: separated
    ab = next(p for p in study["suite_pairs"] if {p["better"], p["worse"]} == {"a", "b"})
    assert (ab["better"], ab["separated"]) == ("b", True)
    assert (ab["diff"], ab["lo"], ab["hi"]) == pytest.approx((0.32, 0.09162, 0.54838), abs=1e-5)
    # gap (smaller is better): a 0.4, 0.3, 0.2 against b 0, −0.02, −0.04; floors add Play's 0.9·0.1/100:
    # var a 0.01/3, var b floored at (0.00073333 + 0.0009)/3; se 0.062272, df 2.6364, t 3.4458 → 0.10542 to 0.53458
    gap = next(p for p in study["gap_pairs"] if {p["better"], p["worse"]} == {"a", "b"})
    assert (gap["better"], gap["separated"]) == ("b", True)
    assert (gap["lo"], gap["hi"]) == pytest.approx((0.10542, 0.53458), abs=1e-5)
    # g has one seed: never ranked, so it is separated from nobody and a, though separated from b, stays in the
    # tier of b and g (a new tier only where separated from every member of the tier above)
    bg = next(p for p in study["suite_pairs"] if {p["better"], p["worse"]} == {"b", "g"})
    assert not bg["separated"] and "not ranked" in bg["words"]
    assert study["suite_tiers"] == [["b", "g", "a"]]
    assert (
        "tiers (a new tier only where separated from every arm above): {b, g, a}" in text
        and "b ahead of a by 0.32 (0.0916 to 0.548)" in text
    )
    csv_text = (out / "study.csv").read_text().splitlines()
    assert csv_text[0].startswith("arm,seed,suite,") and "train_cpu_s" in csv_text[0] and len(csv_text) == 8
    assert study["timing"]["a_s1"]["train_cpu_s"] == 100.0  # two attempts of 50 CPU-s
    assert a["train_cpu_min"] == pytest.approx(100.0 / 60)  # each seed's 100 CPU-s, in minutes


def test_a_smoke_folder_says_it_is_not_the_study(tmp_path):
    out = tmp_path / "smoke"
    out.mkdir()
    smoke = Budget("balance", "cpu", 2, 4, 4, 1, 1)
    record_sitting(out, smoke, StudyRequest(task="balance", out=str(out)))
    req = StudyRequest(
        task="balance",
        out=str(out),
        device="cpu",
        summarize_only=True,
        max_iterations=2,
        num_envs=4,
        play_episodes=4,
        suite_robots=1,
        suite_episodes=1,
    )
    _, text, _ = run_study(req)
    study = json.loads((out / "study.json").read_text())
    assert not study["is_study"] and "--max_iterations 2 (the study: 150)" in study["deviations"]
    assert "**NOT THE STUDY — a smoke run**" in text and study["seeds"] == [] and len(study["sittings"]) == 2


def test_study_summary_of_nothing_is_empty():
    summary = study_summary([], ["a", "b"])
    assert summary["arms"] == {} and summary["suite_pairs"] == [] and summary["suite_tiers"] == []


def test_the_study_loads_no_simulator_nor_torch_before_its_children_run():
    # a refused request costs no Isaac Lab start-up: the checks and the summary are pure
    import subprocess

    code = (
        "import sys, realgap.envs.eval.study.run, realgap.envs.eval.study.summary\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'isaaclab', 'newton', 'warp', 'mujoco', 'torch'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_more_training_processes_than_cores_is_said():
    assert sharing_note(2, 1, cores=2) is None  # balance, --jobs 2 on 2 cores: one core per run
    note = sharing_note(2, 2, cores=2)  # grasp trains on 2 processes: --jobs 2 makes 4
    assert note is not None and "4 processes on 2 CPU cores" in note


def test_training_curves_of_every_started_run_against_env_steps(tmp_path):
    from realgap.envs.eval.study.curves import curve_points, kept_points, write_curves

    a, b = TASKS["balance"].arm("a"), TASKS["balance"].arm("b")
    for arm, rows in ((a, ["0,nan", "1,0.25", "2,0.5"]), (b, ["0,0.1"])):
        run = tmp_path / "runs" / "g1" / f"2026-12-06_10-00-00_{arm.id}_s1"
        _touch(run / "model_1.pt")
        _touch(run / "params" / "agent.yaml", "num_steps_per_env: 24\n")
        _touch(run / "params" / "run.json", json.dumps({"num_envs_total": 10}))
        _touch(run / "progress.csv", "iteration,survival_rate\n" + "\n".join(rows) + "\n")
    pairs = [Pair(a, 1, tmp_path), Pair(b, 1, tmp_path), Pair(a, 2, tmp_path)]  # seed 2 never started
    points = curve_points(pairs, "survival_rate")
    # 24 steps × 10 envs = 240 env steps per iteration; iteration 0 of arm a logged no survival yet
    assert [(p["arm"], p["iteration"], p["env_steps"], p["value"]) for p in points] == [
        ("a", 1, 480, 0.25),
        ("a", 2, 720, 0.5),
        ("b", 0, 240, 0.1),
    ]
    written = write_curves(points, "survival", tmp_path)
    assert [p.name for p in written] == ["training_curves.csv", "training_curves.png"]
    assert (tmp_path / "training_curves.csv").read_text().splitlines()[1] == "a,1,1,480,0.25"
    assert write_curves([], "survival", tmp_path / "none") == []
    # a dozen arms wrap into rows of four panels: the figure is 3 rows tall, 4 panels wide
    many = [{**points[0], "arm": f"x{i}"} for i in range(12)]
    (tmp_path / "many").mkdir()
    png = write_curves(many, "survival", tmp_path / "many")[1].read_bytes()
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")  # the PNG's IHDR
    assert (width, height) == (round(4 * 3.2 * 110), round(3 * 2.8 * 110))
    # summarized again without arm b's run folder (published elsewhere): b's points stay, a's come from its run
    shutil.rmtree(tmp_path / "runs" / "g1" / "2026-12-06_10-00-00_b_s1")
    kept = kept_points(tmp_path, pairs)
    assert [(p["arm"], p["seed"], p["iteration"], p["env_steps"], p["value"]) for p in kept] == [("b", 1, 0, 240, 0.1)]
