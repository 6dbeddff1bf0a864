"""Actuator models from datasheet numbers: pure math on numpy arrays or torch tensors (no simulator, no torch import).

- :mod:`~realgap.actuators.spec`: :class:`ActuatorSpec` (gearbox → reflected inertia, torque envelope, friction,
  latency, PD gains) and joint-name resolution; its parts (:class:`Gearbox`, :class:`PDGains`,
  :class:`BandwidthGains`) in :mod:`~realgap.actuators.spec_parts`.
- :mod:`~realgap.actuators.models`: PD, box and torque–speed saturation, speed-limit cut-off, friction, explicit
  stability margin.
- :mod:`~realgap.actuators.delay`, :mod:`~realgap.actuators.hold`: per-env command delay; target hold/interpolation
  and servo-rate zero-order hold.
- :mod:`~realgap.actuators.filters`, :mod:`~realgap.actuators.transmission`: first-order low-pass (current loop,
  command filter); compliant transmission with backlash (motor inertia + dead-zone spring–damper).
- :mod:`~realgap.actuators.chain`: :class:`ActuatorChain`, the per-physics-step pipeline.
"""

from realgap.actuators.chain import ActuatorChain, ChainOutput, ChainStages, ChainTiming
from realgap.actuators.delay import CommandDelay, latency_range_to_steps, latency_to_steps
from realgap.actuators.filters import LowPass, check_cutoff, lowpass_decay
from realgap.actuators.hold import TargetInterpolator, ZeroOrderHold
from realgap.actuators.models import (
    clip_box,
    clip_torque_speed,
    clip_velocity_limit,
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
    check_physics_step,
    resolve_joint_specs,
)
from realgap.actuators.transmission import (
    ElasticTransmission,
    deadzone,
    elastic_stability_margin,
    transmission_torque,
    two_mass_resonance,
)

__all__ = [
    "ActuatorChain",
    "ActuatorSpec",
    "BandwidthGains",
    "ChainOutput",
    "ChainStages",
    "ChainTiming",
    "CommandDelay",
    "ElasticTransmission",
    "Gearbox",
    "JointParams",
    "LowPass",
    "PDGains",
    "TargetInterpolator",
    "ZeroOrderHold",
    "check_cutoff",
    "check_explicit_stability",
    "check_physics_step",
    "clip_box",
    "clip_torque_speed",
    "clip_velocity_limit",
    "deadzone",
    "elastic_stability_margin",
    "explicit_pd_stability_margin",
    "friction_torque",
    "latency_range_to_steps",
    "latency_to_steps",
    "lowpass_decay",
    "pd_torque",
    "resolve_joint_specs",
    "torque_speed_bounds",
    "transmission_torque",
    "two_mass_resonance",
]
