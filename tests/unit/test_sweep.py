"""Unit tier: the pure parts of robustness sweeps, sim2sim alignment and the action-space comparison — factor
parsing, plans, packing, statistics, the open-loop torques and the discrete energy balance — and that they load no
simulator."""

import math

import numpy as np
import pytest

from realgap.envs.eval.robustness.sweep import (
    DEFAULT_VALUES,
    FACTORS,
    NOT_SWEEPABLE,
    REFERENCE,
    Episode,
    build_report,
    finite_or_none,
    get_factor,
    make_plan,
    pack,
    parse_values,
    point_values,
    summarize,
    wilson_interval,
)
from realgap.envs.sim2sim.align_math import discrete_work, energy_balance, torque_sequence, trajectory_errors

pytestmark = pytest.mark.unit
NOMINAL = {"payload_kg": 0.0, "push_mps": 0.45, "pd_gain_scale": 1.0}


def test_parse_values_checks_names_and_ranges():
    assert parse_values(["payload_kg=0,5,10", "push_mps=1"]) == {"payload_kg": (0.0, 5.0, 10.0), "push_mps": (1.0,)}
    with pytest.raises(ValueError, match="unknown factor 'mass'.*payload_kg"):
        parse_values(["mass=1"])
    with pytest.raises(ValueError, match=r"torque_limit_scale.*\[0\.001, 1\]"):  # above the solver's backstop
        parse_values(["torque_limit_scale=0.5,1.5"])
    with pytest.raises(ValueError, match="expected FACTOR=V1"):
        parse_values(["payload_kg"])
    with pytest.raises(ValueError, match="payload_kg"):
        parse_values(["payload_kg=-1"])  # a negative mass


def test_actuator_stage_factors_ranges():
    inf, dt = math.inf, 0.005  # 200 Hz physics: Nyquist 1/(2·dt) = 100 Hz
    cut, speed = FACTORS["torque_filter_hz"], FACTORS["speed_limit_scale"]
    assert cut.unit == "Hz" and cut.nominal is None and speed.nominal is None  # nominal: read from the env's chains
    assert parse_values(["torque_filter_hz=inf,50,5", "speed_limit_scale=0.5,inf"], dt) == {
        "torque_filter_hz": (inf, 50.0, 5.0),
        "speed_limit_scale": (0.5, inf),
    }
    with pytest.raises(ValueError, match=r"torque_filter_hz.*150.*Nyquist rate 1/\(2·dt\) = 100 Hz"):
        parse_values(["torque_filter_hz=50,150"], dt)
    with pytest.raises(ValueError, match=r"torque_filter_hz.*100.*Nyquist"):  # at the Nyquist rate: refused too
        cut.check(100.0, dt)
    assert cut.check(150.0) == 150.0  # no step known yet: the env checks it against its own
    for bad in ("0", "-5", "nan"):
        with pytest.raises(ValueError, match=r"torque_filter_hz.*admissible range \[0\.001, inf\] or inf Hz"):
            parse_values([f"torque_filter_hz={bad}"], dt)
    with pytest.raises(ValueError, match=r"speed_limit_scale.*admissible range"):
        parse_values(["speed_limit_scale=0"])
    with pytest.raises(ValueError, match="payload_kg"):
        parse_values(["payload_kg=inf"])  # inf only where it means "stage off"
    for robot, defaults in DEFAULT_VALUES.items():  # the shipped defaults fit 200 Hz physics
        for name in ("torque_filter_hz", "speed_limit_scale"):
            assert all(FACTORS[name].check(v, dt) == v for v in defaults[name]), robot


def test_transmission_factors_need_compliant_joints_and_check_their_ranges():
    assert not NOT_SWEEPABLE
    for name in ("backlash_rad", "transmission_stiffness_scale"):
        assert get_factor(name).needs == "compliant" and FACTORS[name].nominal is None  # nominal: read from the env
    assert parse_values(["backlash_rad=0,0.005", "transmission_stiffness_scale=0.5,1.5"]) == {
        "backlash_rad": (0.0, 0.005),
        "transmission_stiffness_scale": (0.5, 1.5),
    }
    with pytest.raises(ValueError, match=r"backlash_rad.*admissible range \[0, 0\.1\] rad"):
        parse_values(["backlash_rad=-0.001"])  # a negative dead band
    with pytest.raises(ValueError, match=r"transmission_stiffness_scale.*admissible range"):
        parse_values(["transmission_stiffness_scale=0"])
    # the G1 defaults span softer and stiffer than the stand-in (1200 N·m/rad, envs/robots/g1.py), which is stable at
    # any stiffness (its link is heavier than its motor)
    scales = DEFAULT_VALUES["g1"]["transmission_stiffness_scale"]
    assert min(scales) < 1.0 < max(scales)


def test_inf_nominal_plans_reports_and_plots(tmp_path):
    from realgap.envs.eval.robustness.plots import _positions, plot_factor, write_plots

    # an ideal current loop (inf) is the nominal: it is part of the sweep, its point is the nominal point ()
    plan = make_plan({"torque_filter_hz": [50.0, 5.0]}, {"torque_filter_hz": math.inf})
    assert plan.sweeps["torque_filter_hz"] == (5.0, 50.0, math.inf)
    assert plan.sweep_points("torque_filter_hz") == [(("torque_filter_hz", 5.0),), (("torque_filter_hz", 50.0),), ()]
    eps = [Episode(True, True, 1.0, 1.0)]
    report = build_report(plan, {"ppo": {p: eps for p in plan.points}})
    strict = finite_or_none(report)  # report.json: inf -> null
    assert strict["factors"]["torque_filter_hz"]["nominal"] is None
    # drawn one mean spacing past the largest finite value: 5, 50 -> inf at 95
    assert _positions([5.0, 50.0, None], None) == ([5.0, 50.0, 95.0], 95.0, True)
    assert _positions([0.5, 1.0], 1.0) == ([0.5, 1.0], 1.0, False)
    for name, entry in (("live", report), ("json", strict)):
        path = plot_factor("torque_filter_hz", entry["factors"]["torque_filter_hz"], tmp_path / f"{name}.png")
        assert path.stat().st_size > 0
    # a heatmap axis with the ideal stage on it, also from report.json (inf written as null)
    nominal = {"torque_filter_hz": math.inf, "payload_kg": 0.0}
    grid = make_plan({"torque_filter_hz": [5.0], "payload_kg": [5.0]}, nominal, grid=("torque_filter_hz", "payload_kg"))
    strict = finite_or_none(build_report(grid, {"ppo": {p: eps for p in grid.points}}))
    assert strict["heatmap"]["x_values"] == [5.0, None]
    assert len(write_plots(strict, tmp_path / "grid")) == 3


def test_plan_adds_the_nominal_point_once_and_the_grid():
    plan = make_plan({"payload_kg": [5.0, 10.0], "push_mps": [0.0, 0.9]}, NOMINAL, grid=("push_mps", "payload_kg"))
    assert plan.sweeps == {"payload_kg": (0.0, 5.0, 10.0), "push_mps": (0.0, 0.45, 0.9)}  # nominal added, sorted
    assert plan.points[:2] == ((), REFERENCE)  # nominal first, then the task's own draws
    # one-factor points: 1 nominal + 2 + 2; grid 3 x 3 = 9 of which 5 are already there (its nominal row/column)
    assert len(plan.points) == 5 + 4 + 1 and len(set(plan.points)) == len(plan.points)
    ref = point_values(REFERENCE, NOMINAL)
    assert math.isnan(ref["push_mps"]) and ref["payload_kg"] == 0.0  # drawn by the task / pinned nominal
    assert plan.sweep_points("payload_kg") == [(), (("payload_kg", 5.0),), (("payload_kg", 10.0),)]
    grid = plan.grid_points()
    assert grid[2][0] == (("payload_kg", 10.0), ("push_mps", 0.0)) and grid[0][1] == ()
    with pytest.raises(ValueError, match="not among the swept"):
        make_plan({"payload_kg": [5.0]}, NOMINAL, grid=("push_mps", "payload_kg"))
    with pytest.raises(ValueError, match="no nominal value"):
        make_plan({"contact_friction": [0.5]}, NOMINAL)


def test_pack_gives_every_point_its_episodes():
    batches = pack([(), (("payload_kg", 5.0),), (("payload_kg", 10.0),)], episodes=5, num_envs=4)
    assert [len(b) for b in batches] == [4, 4, 4, 3]  # 15 env-episodes in batches of 4 envs
    flat = [p for b in batches for p in b]
    assert all(flat.count(p) == 5 for p in set(flat))


def test_wilson_interval_by_hand():
    # 5/10, z = 1.96: centre (0.5 + 0.19208) / 1.38416 = 0.5, half 1.96·√(0.025 + 0.009604) / 1.38416 = 0.2634
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    # 0/16: centre = half = (3.8416 / 32) / 1.2401 = 0.0968 -> (0, 0.1936): not degenerate at 0 like p ± z·σ
    assert wilson_interval(0, 16) == pytest.approx((0.0, 0.1936), abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_summarize_and_report_shape():
    eps = [Episode(True, True, 10.0, 20.0, ("time_out",)), Episode(False, False, 4.0, 5.0, ("reflex", "drop"))]
    s = summarize(eps)
    assert s["success_rate"] == 0.5 and s["time_up_s"]["mean"] == 7.0 and s["time_to_fall_s"]["mean"] == 4.0
    assert s["ended_by"] == {"time_out": 0.5, "reflex": 0.5, "drop": 0.5}  # two terms in one step count for both
    assert s["time_up_s"]["std"] == pytest.approx(math.sqrt(18.0))  # sample std of (10, 4)
    plan = make_plan({"payload_kg": [5.0]}, NOMINAL)
    report = build_report(plan, {"ppo": {p: eps for p in plan.points}})
    rows = report["factors"]["payload_kg"]["policies"]["ppo"]
    assert [r["value"] for r in rows] == [0.0, 5.0] and rows[1]["episodes"] == 2
    assert report["heatmap"] is None and report["nominal"]["push_mps"] == 0.45
    assert report["reference"]["ppo"]["episodes"] == 2
    assert finite_or_none({"a": [math.nan, 1.0, math.inf]}) == {"a": [None, 1.0, None]}


def test_open_loop_torques_and_discrete_work_by_hand():
    tau = torque_sequence(np.array([1.0, -2.0]), np.array([0.1, 0.2]), np.array([50.0, 50.0]), 100, 0.005, seed=1)
    assert tau.shape == (100, 2)
    # the mean over whole periods is the gravity torque; the swing is 0.1 rad · J · ω² with ω in 2π·[0.8, 2] Hz
    amplitude = (tau.max(axis=0) - tau.min(axis=0)) / 2
    swing = 0.1 * np.array([0.1, 0.2])  # 0.1 rad · J
    assert np.all(amplitude > swing * (2 * np.pi * 0.8) ** 2 * 0.9)
    assert np.all(amplitude < swing * (2 * np.pi * 2) ** 2 * 1.1)
    with pytest.raises(ValueError, match="peak torque"):
        torque_sequence(np.array([60.0]), np.array([0.1]), np.array([50.0]), 10, 0.005)
    # work of held torques along the discrete path: 2·(0.1) + (−1)·(−0.2) + 3·0.05 = 0.55 J, |.| sum the same here
    t = np.array([[2.0], [-1.0], [3.0]])
    q = np.array([[0.0], [0.1], [-0.1], [-0.05]])
    assert discrete_work(t, q) == pytest.approx((0.55, 0.55))
    balance = energy_balance(np.array([1.0, 1.2, 1.3, 1.5]), t, q)  # ΔE 0.5 J vs W 0.55 J
    assert balance.relative_residual == pytest.approx(0.05 / 0.55)
    err = trajectory_errors(q, q + 0.01, ["j"])
    assert err["rms_rad"] == pytest.approx(0.01) and err["worst_joint"] == "j"


def test_pure_modules_load_no_simulator():
    from unit.test_layering import SIMULATORS, _loaded_after_import

    modules = [
        "realgap.envs.eval.robustness.sweep",
        "realgap.envs.sim2sim.align_math",
        "realgap.envs.eval.compare.table",
        "realgap.envs.eval.robustness.plots",
    ]
    assert _loaded_after_import(modules, SIMULATORS) == []
