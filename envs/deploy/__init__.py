"""Deploy runtime: run an exported realgap policy on a robot with numpy and onnxruntime only.

    from realgap.envs.deploy import DeployRuntime, load_policy
    meta, policy = load_policy("configs/policies/balance_g1")      # policy.onnx carries the metadata
    runtime = DeployRuntime(meta, my_robot, policy)                 # refuses a robot that does not match
    while True:
        runtime.step()                                              # one policy period

or, on the MuJoCo robot: ``python -m realgap.envs.deploy --policy configs/policies/balance_g1 --robot mujoco``.

The exported format (``realgap.policy/2``) is ``docs/policy_format.md`` and ``configs/schema/policy.schema.json``;
writing a :class:`Robot` for new hardware is ``docs/new_robot.md``. Importing this package loads neither torch nor
Isaac Lab nor any simulator; the MuJoCo test robot lives in :mod:`realgap.envs.deploy.mujoco_robot` (imports
``mujoco``) and the push/fall harness in :mod:`realgap.envs.deploy.sim2sim`.
"""

from realgap.envs.deploy.actions import SUPPORTED_ACTIONS, ActionMapper, UnsupportedActionError
from realgap.envs.deploy.description import DescriptionError, description_sha256, locate_description
from realgap.envs.deploy.format import FORMAT, MetadataError
from realgap.envs.deploy.metadata import PolicyMetadata, load_metadata
from realgap.envs.deploy.observations import ObservationBuilder, UnsupportedObservationError
from realgap.envs.deploy.robot import ImuState, JointState, Robot
from realgap.envs.deploy.runtime import (
    DeployRuntime,
    MetadataMismatchError,
    OnnxPolicy,
    ZeroPolicy,
    check_compatible,
    load_policy,
)

__all__ = [
    "FORMAT",
    "SUPPORTED_ACTIONS",
    "ActionMapper",
    "DeployRuntime",
    "DescriptionError",
    "ImuState",
    "JointState",
    "MetadataError",
    "MetadataMismatchError",
    "ObservationBuilder",
    "OnnxPolicy",
    "PolicyMetadata",
    "Robot",
    "UnsupportedActionError",
    "UnsupportedObservationError",
    "ZeroPolicy",
    "check_compatible",
    "description_sha256",
    "load_metadata",
    "load_policy",
    "locate_description",
]
