"""Compliant transmission with backlash: a motor inertia coupled to the link by a dead-zone spring–damper.

Everything is at the joint side (motor angle divided by the gear ratio; motor inertia = reflected inertia ``N²·I_m``)::

    motor  J_m·θ̈_m = τ_m − τ_s              (state θ_m, θ̇_m, integrated here at the physics step)
    link   J_l·q̈   = τ_s + τ_other           (integrated by the simulator)
    τ_s = k·dz_b(δ) + c·δ̇,   δ = θ_m − q,   dz_b(δ) = δ − clip(δ, −b, b)

With backlash ``b > 0`` the gap is a dead band of width ``2·b``: inside it (``|δ| < b``) nothing is transmitted and
the motor moves freely; on contact the teeth push (``τ_s >= 0`` on the ``+b`` flank, ``<= 0`` on the ``−b`` flank,
so damping never makes a flank pull). This is the dead-zone backlash model of Nordin & Gutman ("Controlling
mechanical systems with backlash — a survey", Automatica 2002). A gap between *rigid* teeth would need impacts an
explicit step cannot resolve, so backlash always comes with a contact/transmission stiffness ``k`` (gearbox
datasheets give both: torsional stiffness and lost motion). With ``b = 0`` it is a series-elastic joint.

Integration: semi-implicit Euler at the physics step ``dt`` (``θ̇_m += dt·(τ_m − τ_s)/J_m``, then
``θ_m += dt·θ̇_m``), with ``τ_s`` from the state at the start of the step — the same scheme the simulator applies to
the link. The relative coordinate then follows semi-implicit Euler on ``μ·δ̈ = −k·δ − c·δ̇`` with
``μ = J_m·J_l/(J_m + J_l)``, which is stable iff ``(k·dt² + 2·c·dt)/(4·μ) < 1``
(:func:`elastic_stability_margin`; for ``c = 0`` this is ``dt < 2/ω_n``, ``ω_n = √(k·(1/J_m + 1/J_l))``).

A joint with ``k = inf`` is rigid: ``τ_s = τ_m`` and its motor state just follows the link.
"""

from __future__ import annotations

import math

from realgap.actuators._xp import Array, EnvIds, as_like, clip, env_index, namespace, zeros_like_shape
from realgap.actuators.models import explicit_pd_stability_margin


def deadzone(delta: Array, backlash: Array | float) -> Array:
    """``dz_b(δ) = δ − clip(δ, −b, b)``: zero inside the band, ``δ ∓ b`` beyond it (``b = 0``: ``δ`` exactly).

    Args:
        delta: Motor-minus-link position ``δ = θ_m − q``, rad.
        backlash: Half-width ``b`` >= 0 of the dead band, rad.

    Shape:
        ``delta`` ``(E, J)``; ``backlash`` ``()``, ``(J,)`` or ``(E, J)``; output ``(E, J)``.
    """
    b = as_like(backlash, delta)
    return delta - clip(delta, -b, b)


def transmission_torque(
    delta: Array, delta_dot: Array, stiffness: Array | float, damping: Array | float, backlash: Array | float
) -> Array:
    """Torque the transmission passes to the link (and takes from the motor).

    ``τ_s = k·dz_b(δ) + c·δ̇``; where ``b > 0``: ``0`` for ``|δ| <= b``, ``max(τ_s, 0)`` for ``δ > b`` and
    ``min(τ_s, 0)`` for ``δ < −b`` (contact pushes, never pulls).

    Args:
        delta: ``δ = θ_m − q``, rad.
        delta_dot: ``δ̇ = θ̇_m − q̇``, rad/s.
        stiffness: ``k`` > 0, N·m/rad (finite).
        damping: ``c`` >= 0, N·m·s/rad.
        backlash: ``b`` >= 0, rad.

    Shape:
        ``delta``, ``delta_dot`` ``(E, J)``; parameters ``()``, ``(J,)`` or ``(E, J)``; output ``(E, J)``.
    """
    xp = namespace(delta)
    b = as_like(backlash, delta)
    tau = as_like(stiffness, delta) * deadzone(delta, b) + as_like(damping, delta) * delta_dot
    contact = xp.where(delta > b, tau * (tau > 0), xp.where(delta < -b, tau * (tau < 0), 0.0 * tau))
    return xp.where(b > 0, contact, tau)


def elastic_stability_margin(
    stiffness: Array | float,
    damping: Array | float,
    motor_inertia: Array | float,
    link_inertia: Array | float,
    dt: float,
) -> Array | float:
    """Explicit-integration margin of the engaged two-mass joint; stable iff < 1.

    ``ρ = (k·dt² + 2·c·dt) / (4·μ)``, ``μ = J_m·J_l/(J_m + J_l)`` (see the module docstring and
    :func:`realgap.actuators.models.explicit_pd_stability_margin`). Use the *smallest* link inertia the joint can
    present: a lighter link raises the resonance.

    Args:
        stiffness: ``k``, N·m/rad.
        damping: ``c``, N·m·s/rad.
        motor_inertia: ``J_m`` > 0, kg·m² (joint side).
        link_inertia: ``J_l`` > 0, kg·m².
        dt: Physics step, s.
    """
    reduced = motor_inertia * link_inertia / (motor_inertia + link_inertia)
    return explicit_pd_stability_margin(stiffness, damping, reduced, dt)


def two_mass_resonance(stiffness: float, motor_inertia: float, link_inertia: float) -> float:
    """Free-free resonance ``ω_n = √(k·(1/J_m + 1/J_l))``, rad/s."""
    return math.sqrt(stiffness * (1.0 / motor_inertia + 1.0 / link_inertia))


class ElasticTransmission:
    """Motor-side state of the compliant transmission (see the module docstring), one per env and joint.

    Call :meth:`step` exactly once per physics step with this step's motor torque and measured link state; it returns
    the torque to apply to the link and advances the motor by ``dt``. After construction or :meth:`reset` an env
    starts in static equilibrium with its first motor torque: ``θ_m = q + τ_m/k + b·sign(τ_m)``, ``θ̇_m = q̇`` (so
    the first transmitted torque equals the rigid chain's, instead of a jolt from an unloaded spring).

    Args:
        num_envs: ``E``.
        physics_dt: ``dt``, s, > 0.

    Shape:
        Torques and states ``(E, J)``; parameters ``()``, ``(J,)`` or ``(E, J)``.
    """

    def __init__(self, num_envs: int, physics_dt: float) -> None:
        if num_envs <= 0:
            raise ValueError(f"num_envs must be > 0, got {num_envs}")
        if not physics_dt > 0:
            raise ValueError(f"physics_dt must be > 0 s, got {physics_dt!r}")
        self.num_envs = num_envs
        self.dt = float(physics_dt)
        self.motor_position: Array | None = None
        """``θ_m`` at the joint side, rad, ``(E, J)`` (``None`` before the first step)."""
        self.motor_velocity: Array | None = None
        """``θ̇_m`` at the joint side, rad/s, ``(E, J)``."""
        self._fresh: Array | None = None  # (E,) bool: initialise from the next step's inputs
        self._any_fresh = True

    def engagement(self, q: Array, backlash: Array | float) -> Array:
        """Which flank is in contact: ``+1`` (``δ > b``), ``−1`` (``δ < −b``), ``0`` inside the band; ``(E, J)``."""
        return namespace(q).sign(deadzone(self.motor_position - q, backlash))

    def motor_speed(self, qd: Array, stiffness: Array | float) -> Array:
        """The velocity the drive sees this step: ``θ̇_m`` where compliant and initialised, else the link's ``q̇``.

        Back-EMF (the torque–speed line) and a drive's speed limit follow the motor, not the link.

        Shape:
            ``qd`` ``(E, J)``; output ``(E, J)``.
        """
        if self.motor_velocity is None or tuple(self.motor_velocity.shape) != tuple(qd.shape):
            return qd
        xp = namespace(qd)
        use = xp.isfinite(as_like(stiffness, qd))
        if self._any_fresh:
            use = use & ~self._fresh.reshape(-1, 1)
        return xp.where(use, self.motor_velocity, qd)

    def reset(self, env_ids: EnvIds = None) -> None:
        """Re-initialise ``env_ids`` from their next step (static equilibrium with that step's motor torque)."""
        if self._fresh is None:
            self._any_fresh = True
            return
        idx, _ = env_index(env_ids, self.num_envs, self._fresh)
        self._fresh[idx] = True
        self._any_fresh = True

    def set_state(self, motor_position: Array, motor_velocity: Array, env_ids: EnvIds = None) -> None:
        """Overwrite ``θ_m`` (rad) and ``θ̇_m`` (rad/s) of ``env_ids`` (e.g. a measured motor encoder)."""
        if self.motor_position is None:
            self.motor_position = zeros_like_shape(tuple(motor_position.shape), motor_position)
            self.motor_velocity = zeros_like_shape(tuple(motor_position.shape), motor_position)
            self._fresh = zeros_like_shape((self.num_envs,), motor_position, integer=True) == 0
        idx, _ = env_index(env_ids, self.num_envs, self._fresh)
        self.motor_position[idx] = motor_position
        self.motor_velocity[idx] = motor_velocity
        self._fresh[idx] = False
        self._any_fresh = bool(self._fresh.any())

    def step(
        self,
        tau_motor: Array,
        q: Array,
        qd: Array,
        stiffness: Array | float,
        damping: Array | float,
        backlash: Array | float,
        motor_inertia: Array | float,
    ) -> Array:
        """Torque on the link for this physics step; advances the motor state by ``dt``.

        Args:
            tau_motor: Motor torque ``τ_m`` (joint side), N·m.
            q: Link position, rad.
            qd: Link velocity, rad/s.
            stiffness: ``k`` > 0, N·m/rad; ``inf``: rigid joint (``τ_s = τ_m``).
            damping: ``c`` >= 0, N·m·s/rad.
            backlash: ``b`` >= 0, rad.
            motor_inertia: ``J_m`` > 0, kg·m² (ignored where rigid).

        Shape:
            ``tau_motor``, ``q``, ``qd`` ``(E, J)``; output ``(E, J)``.
        """
        xp = namespace(q)
        k, b, zero = as_like(stiffness, q), as_like(backlash, q), 0.0 * q
        elastic = xp.isfinite(k)
        k = xp.where(elastic, k, zero)  # rigid joints: no spring (and no inf·0)
        c = xp.where(elastic, as_like(damping, q), zero)
        inv_jm = xp.where(elastic, 1.0 / xp.where(elastic, as_like(motor_inertia, q), zero + 1.0), zero)
        if self.motor_position is None or tuple(self.motor_position.shape) != tuple(q.shape):
            self.motor_position, self.motor_velocity = q * 1, qd * 1
            self._fresh = zeros_like_shape((self.num_envs,), q, integer=True) == 0
            self._any_fresh = True
        if self._any_fresh:  # static equilibrium with this step's motor torque
            fresh = self._fresh.reshape(-1, 1)
            delta0 = xp.where(elastic, tau_motor / xp.where(elastic, k, zero + 1.0) + b * xp.sign(tau_motor), zero)
            self.motor_position = xp.where(fresh, q + delta0, self.motor_position)
            self.motor_velocity = xp.where(fresh, qd, self.motor_velocity)
            self._fresh[:] = False
            self._any_fresh = False
        tau_s = transmission_torque(self.motor_position - q, self.motor_velocity - qd, k, c, b)
        tau_link = xp.where(elastic, tau_s, tau_motor)
        velocity = self.motor_velocity + self.dt * (tau_motor - tau_s) * inv_jm
        self.motor_velocity = xp.where(elastic, velocity, qd)
        self.motor_position = xp.where(elastic, self.motor_position + self.dt * velocity, q)
        return tau_link
