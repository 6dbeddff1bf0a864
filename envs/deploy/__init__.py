"""Deploy runtime: run an exported realgap policy on a robot with numpy and onnxruntime only.

    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.format import load_policy
    meta, policy = load_policy("configs/policies/balance_g1")      # policy.onnx carries the metadata
    runtime = DeployRuntime(meta, my_robot, policy)                 # refuses a robot that does not match
    while True:
        runtime.step()                                              # one policy period

or, on the MuJoCo robot: ``realgap deploy --policy configs/policies/balance_g1 --robot mujoco``.

The exported format (``realgap.policy/2``) and its loader are :mod:`realgap.envs.format` (``docs/policy_format.md``);
writing a :class:`Robot` for new hardware is ``docs/new_robot.md``. This package is the runtime (observations,
actions, the actuator chain per group, logs) and the robots it drives: the MuJoCo test robot in
:mod:`realgap.envs.deploy.mujoco_robot` (imports ``mujoco``), the hidden robot (a stand-in for hardware whose drives
differ from the datasheet) in :mod:`realgap.envs.deploy.hidden_robot`, the pushed balance episode (push schedules,
falls) in :mod:`realgap.envs.deploy.episode`, hardware drivers in :mod:`realgap.envs.deploy.drivers`. Importing this
package loads neither torch nor Isaac Lab nor any simulator.

The format's names re-exported here (``FORMAT``, ``MetadataError``, ``PolicyMetadata``, ``load_metadata``,
``load_policy``, ``OnnxPolicy``, ``DescriptionError``, ``description_sha256``, ``locate_description``) keep code written
before the format had its own package working for one release; import them from :mod:`realgap.envs.format`.
"""

from realgap.envs.deploy.actions import SUPPORTED_ACTIONS, ActionMapper, UnsupportedActionError
from realgap.envs.deploy.objects import MissingObjectPoseError, ObjectPose, StaticObjectPose
from realgap.envs.deploy.observations import ObservationBuilder, UnsupportedObservationError
from realgap.envs.deploy.robot import ImuState, JointState, Robot
from realgap.envs.deploy.runtime import DeployRuntime, MetadataMismatchError, ZeroPolicy, check_compatible
from realgap.envs.format.description import DescriptionError, description_sha256, locate_description
from realgap.envs.format.metadata import PolicyMetadata, load_metadata
from realgap.envs.format.schema import FORMAT, MetadataError
from realgap.envs.format.verify import OnnxPolicy, load_policy

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
    "MissingObjectPoseError",
    "ObjectPose",
    "ObservationBuilder",
    "OnnxPolicy",
    "PolicyMetadata",
    "Robot",
    "StaticObjectPose",
    "UnsupportedActionError",
    "UnsupportedObservationError",
    "ZeroPolicy",
    "check_compatible",
    "description_sha256",
    "load_metadata",
    "load_policy",
    "locate_description",
]
