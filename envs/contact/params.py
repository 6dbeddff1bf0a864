"""Contact parameters as data: MuJoCo's ``solref`` / ``solimp`` / friction / condim / margin / gap / priority.

One :class:`ContactParams` per robot/scene, loaded from ``configs/contact/*.yaml`` and validated on load against the
ranges MuJoCo accepts, so a typo fails before a run instead of silently changing the physics. The engine defaults are
written out in :data:`MUJOCO_DEFAULT` (MuJoCo 3.x XML reference).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from realgap.envs.format.contacts import contact_problems

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs" / "contact"

DOMINANT_SOLMIX = 1e9
"""``solmix`` that makes a geom's mixing weight 1.0 in float32 against a partner of equal priority and solmix ≤ 1:
its solref and solimp become the pair's (MuJoCo mixes them by solmix₁ / (solmix₁ + solmix₂))."""


class ContactParamsError(ValueError):
    """A contact parameter MuJoCo would reject or the physics step cannot resolve."""


@dataclass(frozen=True)
class ContactParams:
    """MuJoCo contact parameters of one pair of surfaces.

    Attributes:
        timeconst: s; solref[0] > 0, time constant of the reference acceleration (mass-spring-damper of the error).
        dampratio: solref[1] > 0, damping ratio of that response (1 = critical).
        d0: solimp[0], impedance at zero violation, in (0, 1).
        dwidth: solimp[1], impedance at violation ``width``, in (0, 1).
        width: m; solimp[2] > 0, violation over which impedance moves from d0 to dwidth.
        midpoint: solimp[3] in (0, 1), midpoint of the sigmoid.
        power: solimp[4] >= 1, power of the sigmoid (1 = linear).
        friction: (sliding, torsional, rolling); sliding is unitless, torsional / rolling in m.
        condim: 1, 3, 4 or 6 contact-force dimensions.
        margin: m; distance at which a contact is generated (>= 0).
        gap: m; >= 0, distance beyond the margin within which contacts are detected but exert no force (MuJoCo
            >= 3.9).
        priority: the geom with the higher priority sets the pair's parameters (MuJoCo's mixing rule).
        timestep: s; physics step these parameters are validated against (MuJoCo clamps timeconst to >= 2 dt).
    """

    timeconst: float = 0.02
    dampratio: float = 1.0
    d0: float = 0.9
    dwidth: float = 0.95
    width: float = 0.001
    midpoint: float = 0.5
    power: float = 2.0
    friction: tuple[float, float, float] = field(default=(1.0, 0.005, 0.0001))
    condim: int = 3
    margin: float = 0.0
    gap: float = 0.0
    priority: int = 0
    timestep: float = 0.002

    def __post_init__(self) -> None:
        validate(self)

    @property
    def solref(self) -> tuple[float, float]:
        """MuJoCo's ``solref`` in the (timeconst, dampratio) form."""
        return (self.timeconst, self.dampratio)

    @property
    def solimp(self) -> tuple[float, float, float, float, float]:
        """MuJoCo's ``solimp`` (d0, dwidth, width, midpoint, power)."""
        return (self.d0, self.dwidth, self.width, self.midpoint, self.power)

    def geom_attrs(self) -> str:
        """The MJCF ``<geom>`` attributes that set these parameters (for building scenes)."""
        f = " ".join(f"{v:g}" for v in self.friction)
        return (
            f'solref="{self.timeconst:g} {self.dampratio:g}" solimp="{" ".join(f"{v:g}" for v in self.solimp)}" '
            f'friction="{f}" condim="{self.condim}" margin="{self.margin:g}" gap="{self.gap:g}" '
            f'priority="{self.priority}"'
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (YAML/JSON ready), as recorded in run folders and exports."""
        out = asdict(self)
        out["friction"] = list(self.friction)
        return out


def validate(p: ContactParams) -> None:
    """Raise :class:`ContactParamsError` naming every field outside MuJoCo's accepted range.

    The rules are :func:`realgap.envs.format.contacts.contact_problems`, the same a run folder's or an export's
    recorded contacts are checked by on load. Only the positive (timeconst, dampratio) solref form is modelled here;
    the time constant must be >= 2 * timestep, the smallest response MuJoCo resolves (below it the engine silently
    clamps, so the file would lie).
    """
    errs = contact_problems(p.solref, p.solimp, p.friction, p.condim, p.margin, p.gap, p.timestep, stiffness_form=False)
    if errs:
        raise ContactParamsError("invalid contact parameters: " + "; ".join(errs))


MUJOCO_DEFAULT = ContactParams()
"""MuJoCo's own defaults: solref 0.02 1, solimp 0.9 0.95 0.001 0.5 2, friction 1 0.005 0.0001, condim 3, dt 2 ms."""


def from_dict(data: dict[str, Any], where: str = "contact") -> ContactParams:
    """Build validated parameters from a mapping; unknown keys are refused (a typo must not be ignored)."""
    known = set(ContactParams.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ContactParamsError(f"{where}: unknown contact keys {unknown}; known: {sorted(known)}")
    kw = dict(data)
    if "friction" in kw:
        kw["friction"] = tuple(float(v) for v in kw["friction"])
    try:
        return ContactParams(**kw)
    except ContactParamsError as e:
        raise ContactParamsError(f"{where}: {e}") from None


def load(name_or_path: str | Path) -> dict[str, ContactParams]:
    """Load ``configs/contact/<name>.yaml`` (or a path): ``{pair name: ContactParams}`` under key ``pairs``."""
    import yaml

    path = Path(name_or_path)
    if not path.suffix:
        path = CONFIG_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise ContactParamsError(
            f"no contact config {path}; available: {sorted(p.stem for p in CONFIG_DIR.glob('*.yaml'))}"
        )
    doc = yaml.safe_load(path.read_text()) or {}
    pairs = doc.get("pairs")
    if not isinstance(pairs, dict) or not pairs:
        raise ContactParamsError(f"{path}: needs a non-empty mapping 'pairs: {{name: {{...}}}}'")
    return {k: from_dict(v or {}, f"{path.name}:{k}") for k, v in pairs.items()}
