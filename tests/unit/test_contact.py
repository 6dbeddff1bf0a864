"""Contact lab: parameter validation, MuJoCo against the soft-constraint closed forms, contact identification."""

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from realgap.envs.contact import drop, identify, theory
from realgap.envs.contact.params import MUJOCO_DEFAULT, ContactParams, ContactParamsError, from_dict, load
from realgap.envs.dr.profile import parse_dr_profile

pytestmark = pytest.mark.unit

# constant impedance (d0 = dwidth) makes the closed forms exact; a fine step keeps discretization below 1 %
_CONST = dict(condim=1, d0=0.9, dwidth=0.9, timestep=0.0005)


def test_shipped_configs_load_and_defaults_match_mujoco():
    import mujoco

    for name in ("mujoco_default", "g1_ground", "panda_grasp"):
        assert load(name)
    m = mujoco.MjModel.from_xml_string("<mujoco><worldbody><geom size='1'/></worldbody></mujoco>")
    assert tuple(m.geom_solref[0]) == MUJOCO_DEFAULT.solref
    np.testing.assert_allclose(m.geom_solimp[0], MUJOCO_DEFAULT.solimp)
    np.testing.assert_allclose(m.geom_friction[0], MUJOCO_DEFAULT.friction)
    assert m.geom_condim[0] == MUJOCO_DEFAULT.condim and m.opt.timestep == MUJOCO_DEFAULT.timestep
    assert load("mujoco_default")["default"] == MUJOCO_DEFAULT


@pytest.mark.parametrize(
    ("bad", "msg"),
    [
        ({"timeconst": 0.005, "timestep": 0.005}, "2 \\* timestep"),
        ({"timeconst": -100.0}, "positive solref"),
        ({"dampratio": 0.0}, "dampratio"),
        ({"d0": 1.0}, "d0 must be in"),
        ({"power": 0.5}, "power"),
        ({"friction": [1.0, -0.1, 0.0]}, "friction"),
        ({"condim": 2}, "condim"),
        ({"gap": -0.01}, "gap must be >= 0"),
        ({"stiffness": 1.0}, "unknown contact keys"),
    ],
)
def test_bad_parameters_refused(bad, msg):
    with pytest.raises(ContactParamsError, match=msg):
        from_dict(bad)


def test_missing_config_named(tmp_path):
    with pytest.raises(ContactParamsError, match="no contact config"):
        load("nope")
    (tmp_path / "x.yaml").write_text("pairs: {}\n")
    with pytest.raises(ContactParamsError, match="non-empty"):
        load(tmp_path / "x.yaml")


def test_impedance_matches_mujoco_shape():
    # d0 at 0, dwidth beyond width, midpoint value at x = midpoint: d0 + 0.5 (dw - d0) for any power
    s = (0.5, 0.9, 0.01, 0.5, 3.0)
    np.testing.assert_allclose(theory.impedance([0.0, 0.005, 0.02], s), [0.5, 0.7, 0.9])


@pytest.mark.parametrize(("tc", "zeta"), [(0.03, 1.0), (0.015, 1.0), (0.0075, 1.0), (0.02, 0.5), (0.02, 2.0)])
def test_steady_penetration_matches_theory(tc, zeta):
    # (1 - d) g tc^2 zeta^2 at d = dmax = 0.9: e.g. 0.1 * 9.81 * 0.03^2 = 0.883 mm; tolerance 0.1 %
    p = ContactParams(timeconst=tc, dampratio=zeta, **_CONST)
    s = drop.DropSpec(height=0.0, duration=1.5)
    m = drop.measure(drop.run(p, s), s)
    expected = 0.1 * 9.81 * tc**2 * zeta**2
    assert theory.steady_penetration(tc, zeta, p.solimp) == pytest.approx(expected, rel=1e-9)
    assert -m["steady_height"] == pytest.approx(expected, rel=1e-3)
    assert m["residual_vz"] < 1e-5


def test_steady_penetration_with_sigmoid_impedance_and_mass_independence():
    # default solimp (0.9 -> 0.95 over 1 mm): the fixed point of theory.steady_penetration; mass drops out
    for mass in (0.2, 5.0):
        p = replace(MUJOCO_DEFAULT, condim=1, timestep=0.001)
        s = drop.DropSpec(height=0.05, mass=mass, duration=1.5)
        m = drop.measure(drop.run(p, s), s)
        assert -m["steady_height"] == pytest.approx(theory.steady_penetration(0.02, 1.0, p.solimp), rel=1e-3)


def test_ringing_period_matches_damping_ratio():
    # zeta 0.3, tc 0.03 s: omega_n = 1 / (tc zeta) = 111 rad/s, period 2 pi / (omega_n sqrt(1 - zeta^2)) = 59.3 ms;
    # semi-implicit Euler at omega_n dt = 0.056 shortens it by ~zeta wn dt / 2 = 0.8 %: tolerance 2 %
    p = ContactParams(timeconst=0.03, dampratio=0.3, **_CONST)
    log = drop.run(p, drop.DropSpec(height=0.0, duration=0.6))
    assert drop.ringing_period(log) == pytest.approx(theory.damped_period(0.03, 0.3, 0.9, 0.9), rel=0.02)
    with pytest.raises(ValueError, match="under-damped"):
        drop.ringing_period(drop.run(replace(p, dampratio=1.5), drop.DropSpec(height=0.0, duration=0.6)))


def test_ringing_period_is_the_integrators_exactly():
    # the step's own period explains all of the shortening (lab.RINGING_CASES, omega_n dt 0.056 to 0.67) to 0.05 %;
    # at tc 0.0075 s, zeta 0.1: continuous 2 pi tc zeta / sqrt(0.99) = 4.736 ms, the step's 4.478 ms (5.4 % short);
    # counted from first contact the mean is 4.290 ms (9.4 % short): the sphere lifts off for one step in its first
    # swing and restarts its phase, which drop.ringing_period now skips
    from realgap.envs.contact import lab

    for r in lab.ringing():
        assert r["period_s"] == pytest.approx(r["discrete_period_s"], rel=5e-4), r
        assert r["period_s"] < r["theory_period_s"]
    worst = lab.ringing(((0.0075, 0.1),))[0]
    assert worst["theory_period_s"] == pytest.approx(2 * np.pi * 0.00075 / np.sqrt(0.99), rel=1e-12)
    assert 1 - worst["discrete_period_s"] / worst["theory_period_s"] == pytest.approx(0.054, abs=0.001)
    assert 1 - worst["period_from_first_contact_s"] / worst["theory_period_s"] == pytest.approx(0.094, abs=0.001)
    assert worst["steps_without_force_after_contact"] == 1


def test_natural_period_carries_no_dmax_factor():
    # omega_n = d / (dmax tc zeta) = 1 / (tc zeta) at d = dmax: tc 0.02 s, zeta 0.25 -> 2 pi * 0.005 = 31.4 ms (a
    # factor dwidth 0.95 in it would say 29.8 ms); tc 0.04 s -> 62.8 ms; the damped period 31.4 / sqrt(1 - 1/16) = 32.4
    for tc, expected in ((0.02, 0.031416), (0.04, 0.062832), (0.01, 0.015708)):
        wn, _ = theory.natural_frequency(tc, 0.25, 0.95, 0.95)
        assert 2 * np.pi / wn == pytest.approx(expected, abs=1e-6)
    assert 2 * np.pi / theory.natural_frequency(0.01, 0.5, 0.95, 0.95)[0] == pytest.approx(0.031416, abs=1e-6)
    assert theory.damped_period(0.02, 0.25, 0.95, 0.95) == pytest.approx(0.032446, abs=1e-6)


def test_box_closed_form_by_hand():
    # constant impedance d = 0.9 (d0 = dwidth): k = 1 / (0.9^2 tc^2 zeta^2), so p = (1 - d) g / (N k d^2)
    # = 0.1 * 9.81 * tc^2 zeta^2 / N: a sphere at tc 0.02 s, zeta 1 sinks 392.4 um, a box on 4 corners 98.1 um
    s = (0.9, 0.9, 0.001, 0.5, 2.0)
    assert theory.steady_penetration(0.02, 1.0, s) == pytest.approx(392.4e-6, rel=1e-9)
    assert theory.steady_penetration(0.02, 1.0, s, n_contacts=4) == pytest.approx(98.1e-6, rel=1e-9)
    # pyramidal, condim 3: (3 - 1) * 1 / (mu^2 (1 + mu^2)); mu 1 -> 1, mu 0.6 -> 2 / (0.36 * 1.36) = 4.0849673
    assert theory.cone_factor("pyramidal", 1.0, 3) == 1.0
    assert theory.cone_factor("pyramidal", 0.6, 3) == pytest.approx(4.0849673, rel=1e-7)
    assert theory.cone_factor("elliptic", 0.6, 3) == theory.cone_factor("pyramidal", 0.6, 1) == 1.0
    assert theory.steady_penetration(0.02, 1.0, s, cone=4.0849673) == pytest.approx(392.4e-6 / 4.0849673, rel=1e-7)
    with pytest.raises(ValueError, match="cone must be"):
        theory.cone_factor("square", 0.6)
    # MuJoCo's dmax is solimp[1] (dwidth), not max(d0, dwidth): with d0 0.95 > dwidth 0.9 the engine rests at
    # 190.29 um, where max() would say 216.8 um
    p = replace(MUJOCO_DEFAULT, condim=1, timestep=0.001, d0=0.95, dwidth=0.9)
    spec = drop.DropSpec(height=0.0, duration=2.0)
    m = drop.measure(drop.run(p, spec), spec)
    assert -m["steady_height"] == pytest.approx(theory.steady_penetration(0.02, 1.0, p.solimp), rel=1e-6)


def test_box_closed_form_reproduces_every_lab_row():
    # the committed lab's 22 box rows (17 distinct drops), each at rest by drop.STEADY_SPEED, equal the closed form
    # p = (1 - d) g / (4 k d^2) (4 corners, pyramidal mu 1: cone factor 1) to 4 decimals in um
    import json
    from pathlib import Path

    committed = json.loads((Path(__file__).parents[2] / "docs/results/contact/drop_lab.json").read_text())
    distinct = set()
    for factor, rows in committed.items():
        if factor not in ("d0", "dampratio", "dwidth", "height", "mass", "timeconst", "timestep"):
            continue
        for r in rows:
            c, f = r["contact"], r["figures"]
            solimp = (c["d0"], c["dwidth"], c["width"], c["midpoint"], c["power"])
            expected = theory.steady_penetration(c["timeconst"], c["dampratio"], solimp, n_contacts=4)
            assert f["at_rest"] == 1.0 and f["residual_vz"] < drop.STEADY_SPEED, (factor, c)
            assert round(-f["steady_height"] * 1e6, 4) == round(expected * 1e6, 4), (factor, c)
            distinct.add(json.dumps([c, {k: v for k, v in r["drop"].items() if k != "duration"}], sort_keys=True))
    assert len(distinct) == 17


def test_rest_rule_extends_a_creeping_drop():
    # damping ratio 2: at 1 s the box still sinks at 117.3 um/s (mean depth of the last 0.1 s 388.1 um); the lab's
    # rule (|vz| < 10 nm/s over the last 10 %) runs it to 4 s, where it rests at the closed form's 367.18 um
    from realgap.envs.contact import lab

    p = replace(lab.BASE, dampratio=2.0)
    log = drop.run(p, lab.BASE_DROP)
    first = drop.measure(log, lab.BASE_DROP)
    assert first["at_rest"] == 0.0 and abs(log.vz[-1]) == pytest.approx(117.3e-6, abs=0.1e-6)
    assert -first["steady_height"] == pytest.approx(388.1e-6, abs=0.1e-6)
    spec, _, m = lab.settled(p, lab.BASE_DROP)
    assert spec.duration == 4.0 and m["at_rest"] == 1.0
    assert -m["steady_height"] == pytest.approx(367.18e-6, abs=0.01e-6)
    assert m["time_to_rest"] == first["time_to_rest"]  # the 1 mm/s settling time comes from the shared start


def test_pyramidal_cone_rests_shallower_below_mu_1():
    # sphere, condim 3, default contact: elliptic 367.18 um at any mu; pyramidal 105.57 um at mu 0.6 (the edge rows
    # n +- mu t share the load with a regulariser 2 mu^2 (1 + mu^2) / 2 of the normal row's), equal at mu 1
    from realgap.envs.contact import lab

    rows = {r["mu"]: r for r in lab.cone_sweep((0.6, 1.0))}
    assert rows[0.6]["sphere_pyramidal_m"] == pytest.approx(105.57e-6, abs=0.01e-6)
    assert rows[0.6]["sphere_elliptic_m"] == pytest.approx(367.18e-6, abs=0.01e-6)
    assert rows[1.0]["sphere_pyramidal_m"] == pytest.approx(rows[1.0]["sphere_elliptic_m"], rel=1e-6)
    for r in rows.values():
        for key in ("sphere_pyramidal", "sphere_elliptic", "box_pyramidal", "box_elliptic"):
            assert r[f"{key}_at_rest"] == 1.0
            assert r[f"{key}_m"] == pytest.approx(r[f"{key}_theory_m"], rel=1e-6), (r["mu"], key)
    # the factor (condim - 1) impratio / (mu^2 (1 + mu^2)) holds with torsion / rolling rows and impratio too:
    # condim 4, impratio 1 -> 70.91 um; condim 6, impratio 2 -> 21.39 um (measured)
    import mujoco

    for condim, impratio in ((4, 1.0), (6, 2.0)):
        p = replace(lab.BASE, condim=condim, friction=(0.6, 0.005, 0.0001))
        spec = replace(lab.BASE_DROP, shape="sphere", height=0.0, duration=2.0)
        opts = {"cone": mujoco.mjtCone.mjCONE_PYRAMIDAL, "impratio": impratio}
        m = drop.measure(drop.run(p, spec, opts), spec)
        cone = theory.cone_factor("pyramidal", 0.6, condim, impratio)
        expected = theory.steady_penetration(p.timeconst, p.dampratio, p.solimp, cone=cone)
        assert m["at_rest"] == 1.0 and -m["steady_height"] == pytest.approx(expected, rel=1e-6), (condim, impratio)


def test_standing_g1_soles_sink_by_their_own_load():
    # the Menagerie G1 standing (servos on, pyramidal cone, mu 0.6, 5 ms): 8 sole contacts at 0.140 / 0.218 /
    # 0.296 mm (min / mean / max), each equal to the closed form of its own force times its ankle link's
    # invweight0 (0.531 /kg) to 0.1 um; none at the single-contact 0.367 mm
    from realgap.envs.contact import lab

    g = lab.g1_standing(load("g1_ground")["foot_ground"])
    assert len(g["contacts"]) == 8 and g["cone"] == "pyramidal" and g["max_speed"] < 1e-3
    assert (g["depth_min_m"], g["depth_mean_m"], g["depth_max_m"]) == pytest.approx((140e-6, 218e-6, 296e-6), abs=1e-6)
    for c in g["contacts"]:
        assert c["depth_m"] == pytest.approx(c["theory_depth_m"], abs=1e-7)
    assert g["single_contact_theory_m"] == pytest.approx(367.18e-6, abs=0.01e-6)
    assert g["single_contact_theory_m"] > g["depth_max_m"]


def test_drop_figures_are_physical():
    # a box dropped 10 cm: peak force above its weight, no rebound at critical damping, at rest by the end
    s = drop.DropSpec(shape="box", height=0.1, duration=1.0)
    m = drop.measure(drop.run(MUJOCO_DEFAULT, s), s)
    assert m["peak_force"] > 5 * m["weight"] and m["max_penetration"] > -m["steady_height"] > 0
    assert m["residual_vz"] < 1e-4 and np.isfinite(m["time_to_rest"])


def test_identify_recovers_hidden_drop_parameters():
    hidden = ContactParams(timeconst=0.012, dampratio=0.6, condim=1, timestep=0.001)
    spec = drop.DropSpec(height=0.02, duration=0.3)
    log = drop.run(hidden, spec)
    noisy = replace(log, z=log.z + np.random.default_rng(0).normal(0, 2e-6, log.z.size))  # 2 um height noise
    fit = identify.fit_drop(noisy, spec, replace(hidden, timeconst=0.02, dampratio=1.0))
    assert abs(fit["timeconst"] - 0.012) < 3 * fit["timeconst_se"]
    assert abs(fit["dampratio"] - 0.6) < 3 * fit["dampratio_se"]
    assert fit["timeconst_se"] < 1e-3 and fit["dampratio_se"] < 0.05  # informative, not wide
    # the DR profile centred on both fits: the hidden values inside its ranges, the 2-step floor applied at 5 ms
    friction = {"mu": 0.8, "mu_se": 0.01}
    prof = parse_dr_profile(identify.dr_profile("fit", ".*_ankle_roll_link", **friction, drop_fit=fit))
    group = prof.contact_solref[0]
    assert group.timeconst_s[0] < 0.012 < group.timeconst_s[1] and group.dampratio[0] < 0.6 < group.dampratio[1]
    floored = parse_dr_profile(identify.dr_profile("fit", ".*", **friction, drop_fit=fit, physics_dt=0.01))
    assert floored.contact_solref[0].timeconst_s == (0.02, 0.02)  # the whole fitted range lies below 2 x 10 ms


def test_identify_recovers_friction_and_writes_dr_profile():
    tilt = np.radians(30.0)
    hidden = ContactParams(friction=(0.42, 0.005, 0.0001), timestep=0.001)
    log = drop.run(hidden, drop.DropSpec(shape="box", height=0.0, duration=0.5, tilt=tilt))
    log = replace(log, x=log.x + np.random.default_rng(1).normal(0, 1e-4, log.x.size))  # 0.1 mm position noise
    fit = identify.fit_friction(log, tilt)
    assert abs(fit["mu"] - 0.42) < 3 * fit["mu_se"] and fit["mu_se"] < 0.01
    prof = parse_dr_profile(identify.dr_profile("fit", ".*_ankle_roll_link", fit["mu"], fit["mu_se"]))
    lo, hi = prof.contact_friction[0].friction
    assert lo < 0.42 < hi


def test_bad_logs_refused():
    p = replace(MUJOCO_DEFAULT, condim=1)
    s = drop.DropSpec(height=0.5, duration=0.1)  # still falling at the end: no contact
    log = drop.run(p, s)
    with pytest.raises(identify.BadLogError, match="never touches"):
        identify.fit_drop(log, s, p)
    with pytest.raises(identify.BadLogError, match="non-finite"):
        identify.fit_drop(replace(log, z=np.where(log.z > 0.3, np.nan, log.z)), s, p)
    with pytest.raises(identify.BadLogError, match="samples"):
        identify.fit_drop(replace(log, t=log.t[:5], z=log.z[:5], vz=log.vz[:5], force=log.force[:5], x=log.x[:5]), s, p)
    stuck = drop.run(
        MUJOCO_DEFAULT, drop.DropSpec(shape="box", height=0.0, duration=0.3, tilt=np.radians(10))
    )  # mu 1 > tan 10
    with pytest.raises(identify.BadLogError, match="does not slide"):
        identify.fit_friction(stuck, np.radians(10))


def test_pure_modules_import_no_simulator():
    code = (
        "import sys; import realgap.envs.contact.theory, realgap.envs.contact.params; "
        "bad = [m for m in ('mujoco', 'isaaclab', 'warp', 'newton', 'torch') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_lab_sweep_and_committed_results_agree_with_theory():
    import json
    from pathlib import Path

    from realgap.envs.contact import lab

    with pytest.raises(ValueError, match="unknown factor"):
        lab.sweep("stiffness")
    rows = lab.sweep("mass")
    # penetration and settling are mass-independent in the impedance model; the peak force scales with the mass
    pens = [r["figures"]["max_penetration"] for r in rows]
    assert max(pens) - min(pens) < 1e-3 * max(pens)
    forces = [r["figures"]["peak_force"] / r["drop"]["mass"] for r in rows]
    assert max(forces) - min(forces) < 1e-3 * max(forces)
    committed = json.loads((Path(__file__).parents[2] / "docs/results/contact/drop_lab.json").read_text())
    for factor, rows in committed.items():
        for r in rows if factor in lab.SWEEPS else []:
            f = r["figures"]
            assert f["sphere_steady_penetration"] == pytest.approx(f["theory_steady_penetration"], rel=1e-3), factor


def test_passive_g1_drop():
    from realgap.envs.contact.engines_g1 import passive_xml
    from realgap.envs.contact.params import load

    foot = load("g1_ground")["foot_ground"]
    log = drop.run_g1(foot, 0.02, 0.4, xml=passive_xml(foot))
    m = drop.measure(log, drop.DropSpec(mass=0.0))
    assert 1e-4 < m["max_penetration"] < 0.02 and m["peak_force"] > 35 * 9.81 * 0.5  # G1 ~35 kg


def test_dominant_solmix_makes_a_geoms_solref_the_pairs():
    """The rule the per-world contact sweep relies on (envs/dr/contact.py ColliderSolref): between geoms of equal
    priority MuJoCo mixes solref by solmix, and DOMINANT_SOLMIX gives one geom the whole pair (float32 too)."""
    import mujoco

    from realgap.envs.contact.params import DOMINANT_SOLMIX

    def pair_solref(solmix: float) -> np.ndarray:
        xml = f"""<mujoco><worldbody>
          <geom type="plane" size="1 1 0.1" solref="0.02 1" solmix="1"/>
          <body pos="0 0 0.049"><freejoint/>
            <geom type="box" size="0.05 0.05 0.05" solref="0.08 0.25" solmix="{solmix:g}"/></body>
        </worldbody></mujoco>"""
        m = mujoco.MjModel.from_xml_string(xml)
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        assert d.ncon > 0
        return d.contact.solref[: d.ncon]

    assert np.allclose(pair_solref(1.0), [0.05, 0.625])  # equal weights: the mean of the two
    assert np.allclose(pair_solref(DOMINANT_SOLMIX), [0.08, 0.25], rtol=1e-7)
    assert np.float32(DOMINANT_SOLMIX) / (np.float32(DOMINANT_SOLMIX) + np.float32(1.0)) == np.float32(1.0)
