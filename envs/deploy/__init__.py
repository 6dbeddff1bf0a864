"""Deploy runtime: run an exported realgap policy on a robot with numpy and onnxruntime only.

    from realgap.envs.deploy import DeployRuntime, load_policy
    meta, policy = load_policy("runs/balance_g1/<run>/exported")     # policy.onnx carries the metadata
    runtime = DeployRuntime(meta, my_robot, policy)                   # refuses a robot that does not match
    while True:
        runtime.step()                                                # one policy period

Importing this package loads neither torch nor Isaac Lab nor any simulator; the MuJoCo test robot lives in
:mod:`realgap.envs.deploy.mujoco_robot` (imports ``mujoco``) and the push/fall harness in
:mod:`realgap.envs.deploy.sim2sim`.
"""

from realgap.envs.deploy.metadata import FORMAT, MetadataError, PolicyMetadata, load_metadata
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
    "DeployRuntime",
    "ImuState",
    "JointState",
    "MetadataError",
    "MetadataMismatchError",
    "ObservationBuilder",
    "OnnxPolicy",
    "PolicyMetadata",
    "Robot",
    "UnsupportedObservationError",
    "ZeroPolicy",
    "check_compatible",
    "load_metadata",
    "load_policy",
]
