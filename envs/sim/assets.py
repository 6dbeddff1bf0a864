"""Offline robot asset pipeline: MJCF from a PyPI wheel -> USD, converted once and cached.

Nothing here touches the network. The cache folder is keyed by the source distribution and its version, the
converter version, a hash of the source MJCF and :data:`WRAPPER_VERSION` (bumped whenever the fixes below change), so
a new wheel or converter produces a new folder and never reuses a stale one.

What the wrapper layer fixes on top of ``mujoco-usd-converter`` output:

1. The converter writes the MJCF's ``<position kp=500>`` actuators as ``MjcActuator`` prims, which Newton's MuJoCo
   solver turns into live servos pulling every joint to q = 0 *underneath* our own actuators. They are deactivated,
   as is the Panda's ``MjcTendon`` (it only served the removed gripper actuator). :func:`check_no_hidden_actuators`
   verifies the solver's actuator count after the scene is built.
2. The articulation root keeps the MJCF body offset (G1 pelvis at z = 0.793) as an authored translate, so the spawned
   root would sit at ``init_state.pos + 0.793``. The wrapper zeroes it; the task's init pose then means what it says.

Wrapper layers reference the converted file by an absolute path (a relative one resolves against the working
directory, so the same scene would load a different file, or none, from another folder).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from realgap.envs.format.description import description_sha256
from realgap.envs.robots.base import RobotSource

WRAPPER_VERSION = 1
"""Bump when the wrapper fixes change: a new cache folder is then built instead of reusing an old one."""


def cache_root() -> Path:
    """Asset cache folder: ``$REALGAP_CACHE`` if set, else ``~/.cache/realgap``."""
    return Path(os.environ.get("REALGAP_CACHE", Path.home() / ".cache" / "realgap")).expanduser()


def _converter_version() -> str:
    return importlib.metadata.version("mujoco-usd-converter")


def cache_key(robot: RobotSource) -> str:
    """Folder name identifying one conversion: source distribution + version, converter version, MJCF hash."""
    digest = hashlib.sha256(robot.mjcf_path().read_bytes()).hexdigest()[:12]
    return (
        f"{robot.name}-{robot.distribution}-{robot.source_version()}"
        f"-mjc2usd{_converter_version()}-w{WRAPPER_VERSION}-{digest}"
    )


def description_hash(robot: RobotSource) -> str:
    """SHA-256 of the robot MJCF and every file it references (meshes, includes, textures), recorded in run folders
    and exported policy metadata; the rule is :data:`realgap.envs.format.description.HASH_RULE` (what
    ``sha256sum <files> | sha256sum`` gives in the MJCF's folder)."""

    return description_sha256(robot.mjcf_path())


@contextlib.contextmanager
def _locked(path: Path):
    """Inter-process lock so two processes (a test run and a training run) never convert into the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def robot_usd(robot: RobotSource) -> Path:
    """Path of the wrapped, simulation-ready USD of ``robot``, converting it on first use.

    Conversion happens in a temporary folder that is renamed into place only when complete, so an interrupted
    conversion never leaves a half-written cache entry.

    Raises:
        MissingRobotSourceError: The PyPI package shipping the robot description is not installed.
    """
    key = cache_key(robot)
    final = cache_root() / "assets" / key
    wrapper = final / "robot.usda"
    if wrapper.is_file():
        return wrapper
    with _locked(cache_root() / "assets" / f".{key}.lock"):
        if wrapper.is_file():  # another process finished it while we waited
            return wrapper
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
        print(
            f"[realgap] first use of the {robot.name} robot: converting {robot.mjcf_path().name} to USD in "
            f"{final} (once)",
            flush=True,
        )
        try:
            with _output_to(tmp / "convert.log"):
                converted = _convert(robot.mjcf_path(), tmp / "converted")
                _write_wrapper(converted, tmp / "robot.usda", final / "converted" / converted.name)
            _check_layers(tmp)  # the USD writer can leave a truncated file without an error (a full disk)
            if final.exists():
                shutil.rmtree(final)
            tmp.rename(final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        print(
            f"[realgap] converted; the converter's messages (notes on MJCF elements USD does not carry, such as "
            f"lights and sensors) are in {final / 'convert.log'}",
            flush=True,
        )
    return wrapper


def _check_layers(folder: Path) -> None:
    """Every USD layer under ``folder`` opens (read back from disk once), before the folder becomes the cache entry.

    Raises:
        OSError: A layer that does not open (truncated: a full disk or a file size limit); names it. Nothing is cached.
    """
    from pxr import Sdf, Tf

    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".usd", ".usda", ".usdc")):
        try:
            layer = Sdf.Layer.OpenAsAnonymous(str(path))
        except Tf.ErrorException as err:
            layer, why = None, str(err).strip().splitlines()[-1]
        else:
            why = "it does not open"
        if layer is None:
            raise OSError(
                f"the USD conversion wrote a corrupt layer '{path}' ({why}); is the disk full? Nothing was "
                "cached: free space and run again"
            )


@contextlib.contextmanager
def _output_to(log: Path) -> Iterator[None]:
    """Send this process's stdout and stderr (file descriptors 1 and 2, so USD's C++ diagnostics too) to ``log``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(log, "ab") as fh:
            os.dup2(fh.fileno(), 1)
            os.dup2(fh.fileno(), 2)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


def _convert(mjcf: Path, out_dir: Path) -> Path:
    # Imported here: pxr and the converter load USD plugins, which the pure layers must never pay for.
    from mujoco_usd_converter import Converter

    # scene=False: the physics scene (gravity, dt, solver) comes from the task's SimulationCfg, never from the MJCF.
    asset = Converter(layer_structure=True, scene=False).convert(str(mjcf), str(out_dir))
    return Path(asset.path)


def _write_wrapper(converted: Path, out: Path, final_converted: Path) -> None:
    """Author ``out``: a layer referencing the converted USD (by its final absolute path) with the fixes as overs.

    Authored with the Sdf layer API, without composing a stage on it: the referenced file does not exist at its final
    path until the atomic rename, and composing would only print "Could not open asset" warnings for it.
    """
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

    src_stage = Usd.Stage.Open(str(converted))
    src_root = src_stage.GetDefaultPrim().GetPath()
    layer = Sdf.Layer.CreateNew(str(out))
    root = Sdf.PrimSpec(layer.pseudoRoot, "robot", Sdf.SpecifierDef, "Xform")
    # The reference names the converted file where it will live after the atomic rename.
    root.referenceList.Prepend(Sdf.Reference(str(final_converted)))
    layer.defaultPrim = root.name
    layer.pseudoRoot.SetInfo(UsdGeom.Tokens.upAxis, UsdGeom.Tokens.z)
    layer.pseudoRoot.SetInfo(UsdGeom.Tokens.metersPerUnit, 1.0)
    for prim in src_stage.Traverse():
        target = root.path.AppendPath(prim.GetPath().MakeRelativePath(src_root))
        if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
            translate = prim.GetAttribute("xformOp:translate")
            if translate and translate.Get() is not None:
                spec = Sdf.CreatePrimInLayer(layer, target)  # an "over" (and overs for its ancestors)
                attr = Sdf.AttributeSpec(spec, "xformOp:translate", translate.GetTypeName(), declaresCustom=True)
                attr.default = Gf.Vec3d(0.0, 0.0, 0.0)
        if prim.GetTypeName() in ("MjcActuator", "MjcTendon"):
            Sdf.CreatePrimInLayer(layer, target).active = False
    layer.Save()


def ground_usd() -> Path:
    """A locally authored ground plane: ``UsdGeom.Plane`` with a collision API (Newton imports it as an infinite plane).

    Isaac Lab's default ``GroundPlaneCfg`` downloads its USD from the cloud, which is not available offline.
    """
    path = cache_root() / "assets" / f"ground_plane-w{WRAPPER_VERSION}.usda"
    if path.is_file():
        return path
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

    with _locked(path.with_suffix(".lock")):
        if path.is_file():
            return path
        tmp = path.with_name(f".{path.name}.{os.getpid()}.usda")
        stage = Usd.Stage.CreateNew(str(tmp))
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        root = UsdGeom.Xform.Define(stage, "/GroundPlane")
        stage.SetDefaultPrim(root.GetPrim())
        plane = UsdGeom.Plane.Define(stage, "/GroundPlane/CollisionPlane")
        plane.CreateAxisAttr(UsdGeom.Tokens.z)
        plane.CreateWidthAttr(200.0)
        plane.CreateLengthAttr(200.0)
        plane.CreatePurposeAttr(UsdGeom.Tokens.guide)
        UsdPhysics.CollisionAPI.Apply(plane.GetPrim())
        # A visual quad under "Environment", where GroundPlaneCfg looks for geometry to scale and colour.
        env = UsdGeom.Xform.Define(stage, "/GroundPlane/Environment")
        env.AddScaleOp().Set(Gf.Vec3f(1.0, 1.0, 1.0))
        mesh = UsdGeom.Mesh.Define(stage, "/GroundPlane/Environment/Geometry")
        s = 50.0
        mesh.CreatePointsAttr([(-s, -s, 0.0), (s, -s, 0.0), (s, s, 0.0), (-s, s, 0.0)])
        mesh.CreateFaceVertexCountsAttr([4])
        mesh.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
        UsdGeom.PrimvarsAPI(mesh).CreatePrimvar("st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.faceVarying)
        stage.GetRootLayer().Save()
        tmp.rename(path)
    return path


def check_no_hidden_actuators(expected_nu: int) -> None:
    """Assert the MuJoCo solver holds exactly the actuators Isaac Lab created (no servo left over from the MJCF).

    Call after the scene is built. ``expected_nu`` is what Isaac Lab's drives account for (for Newton's MuJoCo solver,
    two per actuated joint: position and velocity drives).

    Raises:
        RuntimeError: The solver has more actuators than expected.
    """
    from isaaclab_newton.physics import NewtonManager

    solver = NewtonManager._solver
    mj_model = getattr(solver, "mj_model", None)
    if mj_model is None:
        return
    if mj_model.nu > expected_nu:
        raise RuntimeError(
            f"The MuJoCo solver has {mj_model.nu} actuators, expected {expected_nu}: servos from the source MJCF are "
            "still live under realgap's actuators. Delete the asset cache (~/.cache/realgap/assets) and rebuild."
        )
