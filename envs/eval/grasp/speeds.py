"""How fast a grasp policy moves the fingers and the arm, against the datasheet, in the runtime's MuJoCo grasp scene.

The Franka Hand's fingers move at about 0.05 m/s each on the robot (``actuators.groups[].velocity_limit`` of the
finger joints); training and the runtime bound them by nothing but the finger PD and its force limit, so a policy can
learn to rely on a hand far faster than the real one (issue #62). The arm's joint-speed reflex is checked once per
policy step in training and in the scene, every 1 ms on the robot. :func:`grasp_speed_report` runs the export's
episodes as :func:`~realgap.envs.deploy.grasp_scene.run_grasp_episode` does and records, at every physics step:

- the peak finger joint speed |q̇| (m/s, per finger) and the peak closing speed −(q̇₁ + q̇₂) (m/s, the rate the
  opening between the fingers shrinks);
- the arm's peak |q̇_i| / q̇_max,i over its joints at every physics step (5 ms: the closest the scene comes to the
  robot's 1 ms check), and the same peak over the policy steps only (what the reflex of training and of the scene
  sees).

The figures of docs/limits.md (16 episodes of the shipped grasp, seed 0)::

    python -c "import json; from realgap.envs.deploy import load_policy; from realgap.envs.eval.grasp.speeds import \
    grasp_speed_report as r; print(json.dumps(r(*load_policy('configs/policies/grasp_franka'), 16), indent=1))"
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

import numpy as np

from realgap.envs.deploy.grasp_scene import MujocoGraspRobot, run_grasp_episode
from realgap.envs.deploy.runtime import DeployRuntime
from realgap.envs.format.metadata import PolicyMetadata

FINGER_JOINTS = ("finger_joint1", "finger_joint2")


@dataclass(frozen=True)
class EpisodeSpeeds:
    """Peak speeds of one grasp episode (module docstring).

    Attributes:
        ended_by: The episode's ending (``GraspEpisode.ended_by``). steps: Its policy steps.
        finger_peak_mps: Largest |q̇| of either finger joint, m/s.
        closing_peak_mps: Largest −(q̇₁ + q̇₂), m/s (0 when the fingers never close).
        arm_peak_ratio: Largest |q̇_i| / q̇_max,i over the arm's joints and every physics step.
        arm_peak_joint: The joint that reached it (empty when the arm never moved).
        arm_checked_ratio: The same, at the policy steps only (where the reflex is checked).
    """

    ended_by: str
    steps: int
    finger_peak_mps: float
    closing_peak_mps: float
    arm_peak_ratio: float
    arm_peak_joint: str
    arm_checked_ratio: float


class _RecordingGraspRobot(MujocoGraspRobot):
    """The grasp scene, recording the peak speeds after every physics step and at every reflex check."""

    def __init__(self, meta: PolicyMetadata, seed: int, start_noise: bool) -> None:
        self._fingers = [meta.joint_names.index(j) for j in FINGER_JOINTS]
        self.clear()
        super().__init__(meta, seed=seed, start_noise=start_noise)

    def clear(self) -> None:
        """Forget the peaks (before an episode)."""
        self.finger = self.closing = self.arm = self.checked = 0.0
        self.arm_joint = -1

    def _ratio(self) -> np.ndarray:
        return np.abs(self.read_joints().vel[self._arm]) / self.speed_limit

    def step(self) -> None:
        super().step()
        vel = self.read_joints().vel[self._fingers]
        self.finger = max(self.finger, float(np.abs(vel).max()))
        self.closing = max(self.closing, float(-vel.sum()))  # opening width = q1 + q2: closing when it shrinks
        ratio = self._ratio()
        if ratio.max() > self.arm:
            self.arm, self.arm_joint = float(ratio.max()), int(self._arm[int(np.argmax(ratio))])

    def arm_speed_exceeded(self) -> bool:
        self.checked = max(self.checked, float(self._ratio().max()))
        return super().arm_speed_exceeded()


def grasp_speed_report(
    meta: PolicyMetadata, policy: object, episodes: int, seed: int = 0, start_noise: bool = True
) -> dict:
    """Run ``episodes`` episodes of ``policy`` in the MuJoCo grasp scene; peak finger and arm speeds per episode and
    their summary, with the datasheet limits they are compared with.

    Args:
        meta: A grasp export (scene facts, the finger joints). policy: Observation → action.
        episodes: Number of episodes (> 0). seed: Object draws, start noise and delay, as ``grasp_report``.
        start_noise: Training's arm start noise (``grasp_report``'s default).

    Raises:
        ValueError: ``episodes`` < 1, or the export has no scene facts or no finger joints.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    missing = [j for j in FINGER_JOINTS if j not in meta.joint_names]
    if missing:
        raise ValueError(f"{meta.task}: the export has no finger joints {missing} (a Franka grasp export has)")
    robot = _RecordingGraspRobot(meta, seed, start_noise)
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    limits = dict(zip(meta.joint_names, meta.joint_array("velocity_limit"), strict=True))
    rows = []
    for _ in range(episodes):
        robot.clear()
        episode = run_grasp_episode(runtime, robot)
        joint = meta.joint_names[robot.arm_joint] if robot.arm_joint >= 0 else ""  # "": the arm never moved
        rows.append(
            EpisodeSpeeds(episode.ended_by, episode.steps, robot.finger, robot.closing, robot.arm, joint, robot.checked)
        )
    finger_limit = float(limits[FINGER_JOINTS[0]])

    def summary(key: str) -> dict[str, float]:
        values = [getattr(r, key) for r in rows]
        return {"max": max(values), "median": statistics.median(values), "min": min(values)}

    return {
        "episodes": episodes,
        "seed": seed,
        "start_noise": start_noise,
        "successes": sum(r.ended_by == "success" for r in rows),
        "finger_velocity_limit_mps": finger_limit,
        "finger_peak_mps": summary("finger_peak_mps"),
        "finger_peak_over_limit": max(r.finger_peak_mps for r in rows) / finger_limit,
        "closing_peak_mps": summary("closing_peak_mps"),
        "arm_peak_ratio": summary("arm_peak_ratio"),
        "arm_checked_ratio": summary("arm_checked_ratio"),
        "per_episode": [asdict(r) for r in rows],
    }
