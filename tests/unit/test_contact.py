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
    # semi-implicit Euler at omega_n dt = 0.056 shortens it by ~1 %: tolerance 2 %
    p = ContactParams(timeconst=0.03, dampratio=0.3, **_CONST)
    log = drop.run(p, drop.DropSpec(height=0.0, duration=0.6))
    assert drop.ringing_period(log) == pytest.approx(theory.damped_period(0.03, 0.3, 0.9, 0.9), rel=0.02)
    with pytest.raises(ValueError, match="under-damped"):
        drop.ringing_period(drop.run(replace(p, dampratio=1.5), drop.DropSpec(height=0.0, duration=0.6)))


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
        for r in rows if factor != "g1_passive" else []:
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
