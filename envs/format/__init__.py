"""The exported policy format ``realgap.policy/2``: what an export is, independent of who writes or runs it.

One quaternion convention across realgap: **(w, x, y, z)**, w first, unit norm (the export, the deploy runtime,
MuJoCo, the SRBD law). Engines with another order are converted at their boundary by name: Isaac Lab 3.0 and pinocchio
store ``(x, y, z, w)`` (:func:`~realgap.envs.srbd.dynamics.wxyz_from_xyzw` and its inverse ``xyzw_from_wxyz``); an
export field in another order says so in its description (the grasp task's ``object_quat_b`` observation).

    from realgap.envs.format import load_policy
    meta, policy = load_policy("configs/policies/balance_g1")   # verified: files agree, digest matches, physics sane

Modules: :mod:`~realgap.envs.format.schema` (format id, JSON Schema check, the fixed texts every file carries),
:mod:`~realgap.envs.format.metadata` (:class:`PolicyMetadata` and its parts: :mod:`~realgap.envs.format.robot`,
:mod:`~realgap.envs.format.actions`, :mod:`~realgap.envs.format.observations`, :mod:`~realgap.envs.format.groups`,
:mod:`~realgap.envs.format.stages`),
:mod:`~realgap.envs.format.description` (the robot description's hash rule), :mod:`~realgap.envs.format.contacts` (the
rules recorded contact parameters are checked by), :mod:`~realgap.envs.format.verify` (the one verifying loader),
:mod:`~realgap.envs.format.integrity` and :mod:`~realgap.envs.format.provenance` (digest and relative provenance paths).
The exporter (:mod:`realgap.envs.export`) writes it and the deploy runtime (:mod:`realgap.envs.deploy`) runs it; this
package imports neither (numpy, jsonschema, onnxruntime to load a graph).
"""

from realgap.envs.format.description import DescriptionError, description_sha256, locate_description
from realgap.envs.format.metadata import PolicyMetadata, load_metadata
from realgap.envs.format.schema import FORMAT, MetadataError
from realgap.envs.format.verify import ExportIntegrityError, OnnxPolicy, load_policy, load_verified

__all__ = [
    "FORMAT",
    "DescriptionError",
    "ExportIntegrityError",
    "MetadataError",
    "OnnxPolicy",
    "PolicyMetadata",
    "description_sha256",
    "load_metadata",
    "load_policy",
    "load_verified",
    "locate_description",
]
