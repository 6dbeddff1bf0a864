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

Integration, at the physics step ``dt``: the motor is advanced by this module, implicitly in the spring–damper
(backward Euler about the link state ``q, q̇`` at the start of the step, on the flank engaged then)::

    θ̇_m' = (θ̇_m + dt·(τ_m − k·(θ_m − q − e·b) + c·q̇)/J_m) / (1 + dt·c/J_m + dt²·k/J_m),   θ_m' = θ_m + dt·θ̇_m'

(``e`` the engaged flank, ``±1``; ``b = 0``: ``e·b = 0``), and the link receives ``τ_s`` at the new motor state, which
the simulator integrates explicitly. An explicit motor update (the earlier scheme) is stable only for
``(k·dt² + 2·c·dt)/(4·μ) < 1`` with ``μ = J_m·J_l/(J_m + J_l)``, far below real gearbox stiffnesses at 5 ms, and under
a PD servo it left the G1's compliant stand-in oscillating at every stiffness. With the motor implicit the engaged
two-mass joint is stable iff ``(k·dt² + 2·c·dt)·(1/J_l − 1/J_m)/4 < 1`` (:func:`elastic_stability_margin`; the
eigenvalues of the four-state step map, checked in the unit tests): for every ``k`` and ``c`` when the link is at least
as heavy as the motor, and only the link side's explicit step binds otherwise. The first step after a reset, and the
moment a flank opens (the dead band is entered), are treated as the explicit scheme would: a flank that would pull
is released and the motor moves freely for that step.

A joint with ``k = inf`` is rigid: ``τ_s = τ_m`` and its motor state just follows the link.
"""

from __future__ import annotations

import math

from realgap.actuators._xp import Array, EnvIds, as_like, clip, env_index, namespace, zeros_like_shape


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
    """Stability margin of the engaged two-mass joint as integrated here (motor implicit in the spring, link explicit);
    stable iff < 1.

    ``ρ = (k·dt² + 2·c·dt)·max(1/J_l − 1/J_m, 0)/4`` (see the module docstring): ``0`` (unconditionally stable) when
    ``J_l >= J_m``. Derivation: eliminating the motor's implicit update leaves the relative coordinate with the
    explicit step of :func:`realgap.actuators.models.explicit_pd_stability_margin` on the inertia
    ``1/(1/J_l − 1/J_m)``; confirmed against the eigenvalues of the four-state step map. Use the *smallest* link
    inertia the joint can present: a lighter link is the binding case.

    Args:
        stiffness: ``k``, N·m/rad.
        damping: ``c``, N·m·s/rad.
        motor_inertia: ``J_m`` > 0, kg·m² (joint side).
        link_inertia: ``J_l`` > 0, kg·m².
        dt: Physics step, s.
    """
    gap = 1.0 / link_inertia - 1.0 / motor_inertia
    gap = gap * (gap > 0)  # J_l >= J_m: no bound
    return (stiffness * dt * dt + 2.0 * damping * dt) * gap / 4.0


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

    def motor_state(self, q: Array, qd: Array, stiffness: Array | float) -> tuple[Array, Array]:
        """What the drive measures this step: ``(θ_m, θ̇_m)`` where compliant and initialised, else the link's
        ``(q, q̇)``.

        The drive's own encoder sits on the motor (before the gearbox; a Unitree joint reports the rotor angle over
        the gear ratio), so its PD loop, back-EMF (the torque–speed line) and speed limit all follow the motor, not
        the link. Closing the PD on the motor keeps it collocated: a PD on the link position through a compliant
        transmission is unstable on a light link even when integrated finely (the G1 stand-in knee at dt = 0.1 ms:
        ``test_pd_on_the_link_through_the_spring_is_unstable_even_finely_integrated``), which a collocated loop is not.

        Shape:
            ``q``, ``qd`` ``(E, J)``; outputs ``(E, J)``.
        """
        if self.motor_velocity is None or tuple(self.motor_velocity.shape) != tuple(qd.shape):
            return q, qd
        xp = namespace(qd)
        use = xp.isfinite(as_like(stiffness, qd))
        if self._any_fresh:
            use = use & ~self._fresh.reshape(-1, 1)
        return xp.where(use, self.motor_position, q), xp.where(use, self.motor_velocity, qd)

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
        fresh = None
        if self._any_fresh:  # static equilibrium with this step's motor torque
            fresh = self._fresh.reshape(-1, 1) & True  # a copy: the flags are cleared below
            delta0 = xp.where(elastic, tau_motor / xp.where(elastic, k, zero + 1.0) + b * xp.sign(tau_motor), zero)
            self.motor_position = xp.where(fresh, q + delta0, self.motor_position)
            self.motor_velocity = xp.where(fresh, qd, self.motor_velocity)
            self._fresh[:] = False
            self._any_fresh = False
        # Motor implicit in the spring–damper of the flank engaged at the start of the step (module docstring).
        flank = xp.sign(deadzone(self.motor_position - q, b))  # +1 / -1 engaged, 0 inside the band
        engaged = xp.where(b > 0, flank * flank, 1.0 + zero)  # b = 0: always engaged
        k_e, c_e, offset = k * engaged, c * engaged, xp.where(b > 0, b * flank, zero)
        free_velocity = self.motor_velocity + self.dt * tau_motor * inv_jm
        velocity = (
            self.motor_velocity + self.dt * (tau_motor - k_e * (self.motor_position - q - offset) + c_e * qd) * inv_jm
        ) / (1.0 + self.dt * c_e * inv_jm + self.dt * self.dt * k_e * inv_jm)
        position = self.motor_position + self.dt * velocity
        tau_s = k_e * (position - q - offset) + c_e * (velocity - qd)
        pulls = (b > 0) & (flank * tau_s < 0)  # a flank never pulls: released, the motor free for this step
        velocity = xp.where(pulls, free_velocity, velocity)
        tau_s = xp.where(pulls, zero, tau_s)
        if fresh is not None:  # the seating step transmits the motor torque exactly (no jolt), the motor at rest on q̇
            velocity = xp.where(fresh, qd, velocity)
            tau_s = xp.where(fresh, tau_motor, tau_s)
        tau_link = xp.where(elastic, tau_s, tau_motor)
        self.motor_velocity = xp.where(elastic, velocity, qd)
        self.motor_position = xp.where(elastic, self.motor_position + self.dt * velocity, q)
        return tau_link
