"""Actuator models from datasheet numbers: pure math on numpy arrays or torch tensors (no simulator, no torch import).

- :mod:`~realgap.actuators.spec`: :class:`ActuatorSpec` (gearbox → reflected inertia, torque envelope, friction,
  latency, PD gains) and joint-name resolution.
- :mod:`~realgap.actuators.models`: PD, box and torque–speed saturation, friction, explicit stability margin.
- :mod:`~realgap.actuators.delay`, :mod:`~realgap.actuators.hold`: per-env command delay; target hold/interpolation
  and servo-rate zero-order hold.
- :mod:`~realgap.actuators.chain`: :class:`ActuatorChain`, the per-physics-step pipeline.
"""

from realgap.actuators.chain import ActuatorChain, ChainOutput, ChainTiming
from realgap.actuators.delay import CommandDelay, latency_range_to_steps, latency_to_steps
from realgap.actuators.hold import TargetInterpolator, ZeroOrderHold
from realgap.actuators.models import (
    clip_box,
    clip_torque_speed,
    explicit_pd_stability_margin,
    friction_torque,
    pd_torque,
    torque_speed_bounds,
)
from realgap.actuators.params import JointParams
from realgap.actuators.spec import (
    ActuatorSpec,
    BandwidthGains,
    Gearbox,
    PDGains,
    check_explicit_stability,
    resolve_joint_specs,
)

__all__ = [
    "ActuatorChain",
    "ActuatorSpec",
    "BandwidthGains",
    "ChainOutput",
    "ChainTiming",
    "CommandDelay",
    "Gearbox",
    "JointParams",
    "PDGains",
    "TargetInterpolator",
    "ZeroOrderHold",
    "check_explicit_stability",
    "clip_box",
    "clip_torque_speed",
    "explicit_pd_stability_margin",
    "friction_torque",
    "latency_range_to_steps",
    "latency_to_steps",
    "pd_torque",
    "resolve_joint_specs",
    "torque_speed_bounds",
]
