"""Left-right symmetry of the balance task, for rsl-rl-lib's symmetry augmentation (``algorithm.symmetry_cfg``).

Standing under pushes of random heading is symmetric about the robot's sagittal plane: a push to the left answered by
a motion is the mirror of a push to the right answered by the mirrored motion. Augmenting every PPO mini-batch with
the mirrored samples (Mittal et al., ICRA 2024) gives the policy both halves of that experience from one rollout.

The reflection y → −y acts on each observation term by its kind:

=============  =====================================  ========================================================
kind           terms                                  mirrored
=============  =====================================  ========================================================
``axial``      base angular velocity (pseudovector)   (ω_x, ω_y, ω_z) → (−ω_x, ω_y, −ω_z)
``polar``      projected gravity, base velocity        (v_x, v_y, v_z) → (v_x, −v_y, v_z)
``scalar``     base height                            unchanged
``joints``     joint positions / velocities, actions  permuted left ↔ right, roll and yaw joints negated
=============  =====================================  ========================================================

A term with an observation history (Isaac Lab's ``history_length``, flattened oldest to newest) is mirrored frame
by frame.

The joint rule is the robot's fact (:data:`realgap.envs.robots.g1.G1_JOINT_MIRROR`). Everything is precomputed into
one gather index and one sign vector per observation group, so mirroring a batch is ``x[:, index] * sign``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from realgap.envs.robots.g1 import G1_JOINT_MIRROR

TERM_KINDS: dict[str, str] = {
    "base_ang_vel": "axial",
    "projected_gravity": "polar",
    "base_lin_vel": "polar",
    "base_height": "scalar",
    "joint_pos": "joints",
    "joint_vel": "joints",
    "actions": "joints",
}
"""Mirror rule of each observation term of the balance task, by term name."""

_VEC3_SIGN = {"axial": (-1.0, 1.0, -1.0), "polar": (1.0, -1.0, 1.0)}


@dataclass(frozen=True)
class GroupMirror:
    """``mirrored = x[..., index] * sign`` for one concatenated observation group (or the action vector).

    Shape:
        index, sign: ``(D,)``.
    """

    index: torch.Tensor
    sign: torch.Tensor


@dataclass(frozen=True)
class MirrorLayout:
    """Mirror of every observation group and of the action vector, for one env's term layout and joint order."""

    groups: dict[str, GroupMirror]
    actions: GroupMirror

    def to(self, device: str | torch.device) -> MirrorLayout:
        """The same layout with its index and sign tensors on ``device`` (moved once, not per mini-batch)."""
        move = lambda m: GroupMirror(m.index.to(device), m.sign.to(device))  # noqa: E731
        return MirrorLayout({k: move(m) for k, m in self.groups.items()}, move(self.actions))

    @staticmethod
    def build(joint_names: list[str], groups: dict[str, dict[str, int]]) -> MirrorLayout:
        """Layout for joints in ``joint_names`` order (the simulator's) and ``groups``: group -> {term: width}, in
        concatenation order.

        Raises:
            ValueError: A term without a mirror rule, a term width that does not fit its kind, or a joint whose
                mirror is missing.
        """
        joint_index, joint_sign = [], []
        for name in joint_names:
            other, sign = G1_JOINT_MIRROR.get(name, (None, 0.0))
            if other not in joint_names:
                raise ValueError(f"joint '{name}' has no mirror among the env's joints ({other})")
            joint_index.append(joint_names.index(other))  # mirrored[i] = sign_i · x[mirror(i)]
            joint_sign.append(sign)
        joints = GroupMirror(torch.tensor(joint_index), torch.tensor(joint_sign))
        out = {}
        for group, terms in groups.items():
            index, sign, start = [], [], 0
            for term, width in terms.items():
                kind = TERM_KINDS.get(term)
                if kind is None:
                    raise ValueError(f"no mirror rule for observation term '{term}' (known: {sorted(TERM_KINDS)})")
                expected = {"axial": 3, "polar": 3, "scalar": 1, "joints": len(joint_names)}[kind]
                if width == 0 or width % expected:
                    raise ValueError(
                        f"observation term '{term}' ({kind}) has width {width}, expected {expected} "
                        f"(or a multiple: an observation history)"
                    )
                for _ in range(width // expected):  # a history is flattened frame after frame, each mirrored alike
                    if kind == "joints":
                        index += (start + joints.index).tolist()
                        sign += joints.sign.tolist()
                    else:
                        index += list(range(start, start + expected))
                        sign += list(_VEC3_SIGN.get(kind, (1.0,)))
                    start += expected
            out[group] = GroupMirror(torch.tensor(index), torch.tensor(sign))
        return MirrorLayout(out, joints)

    @staticmethod
    def from_env(env: Any) -> MirrorLayout:
        """Layout of a live Isaac Lab env (``ManagerBasedRLEnv`` or a wrapper of it): its observation terms and the
        robot's joint order (the balance action covers every joint in that order)."""
        base = env.unwrapped
        manager = base.observation_manager
        groups = {
            group: {
                term: int(torch.Size(dims).numel())
                for term, dims in zip(manager.active_terms[group], manager.group_obs_term_dim[group], strict=True)
            }
            for group in manager.active_terms
        }
        return MirrorLayout.build(list(base.scene["robot"].joint_names), groups)


def mirror_obs(obs: torch.Tensor, mirror: GroupMirror) -> torch.Tensor:
    """The mirrored observation group. Shape: ``(B, D)`` → ``(B, D)``. ``.to`` is free when ``mirror`` is already on
    ``obs``'s device (:meth:`MirrorLayout.to`): no host-to-device copy per mini-batch."""
    return obs[..., mirror.index.to(obs.device)] * mirror.sign.to(obs.device, obs.dtype)


def mirror_actions(actions: torch.Tensor, layout: MirrorLayout) -> torch.Tensor:
    """The mirrored joint-target actions. Shape: ``(B, 29)`` → ``(B, 29)``."""
    return mirror_obs(actions, layout.actions)


def augment_with_mirror(env: Any, obs: Any = None, actions: torch.Tensor | None = None) -> tuple[Any, Any]:
    """rsl-rl-lib's ``data_augmentation_func``: each batch followed by its mirror (batch size × 2).

    Args:
        env: The training env (rsl-rl passes its vec env); the layout is built once and kept on it.
        obs: TensorDict of observation groups, ``(B, D_group)`` each, or None.
        actions: ``(B, 29)`` or None.
    """
    layout = getattr(env, "_realgap_mirror", None)
    if layout is None:
        layout = MirrorLayout.from_env(env).to(env.device)  # once on the training device
        env._realgap_mirror = layout
    obs_out = None
    if obs is not None:
        obs_out = obs.__class__(
            {k: torch.cat([v, mirror_obs(v, layout.groups[k])]) for k, v in obs.items()},
            batch_size=[2 * obs.batch_size[0]],
            device=obs.device,
        )
    act_out = None if actions is None else torch.cat([actions, mirror_actions(actions, layout)])
    return obs_out, act_out
