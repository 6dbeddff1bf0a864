"""The transfer study's arms as data: per task, the training command's base and each arm's DR profile.

Every entry is the table of ``docs/results/transfer.md`` ("The arms and their commands"), written before any arm ran;
changing one is a new version of that page's rules, not an edit here alone. The study's budget (iterations, processes,
default env count) is the page's "Checkpoints and budget". Arms the page names but this command does not run are in
:data:`LEFT_OUT` with the reason, so asking for one says why instead of "unknown".
"""

from __future__ import annotations

from dataclasses import dataclass

from realgap.envs.eval.compare.run import parse_seeds
from realgap.envs.run.run_dir import REPO_ROOT

SUITE_DIR = REPO_ROOT / "configs" / "suites"
"""Where the versioned suite files live (``configs/suites/``)."""
GPU_NUM_ENVS = 4096
"""The env count of a GPU arm (the page: compared only with GPU arms); the CPU keeps the task's default."""
MAX_SEED = 999
"""Training seeds stay below 1 000: the suite's robots start at 10 000 and no training may share a seed with them."""


@dataclass(frozen=True)
class Arm:
    """One arm of the study.

    Attributes:
        id: The page's letter (``a`` … ``h``, ``c0``; ``gh``, ``gm``, ``gho``, ``hw``: levers of items 5 and 3), also
            the run name's prefix (``<id>_s<seed>``).
        what: What the arm trains with, in the page's words.
        dr_profile: The ``--dr_profile`` of its training (a name of ``configs/dr/``).
        overrides: ``--set`` of its training (a choice no profile makes, such as the action's anchor); none for most.
    """

    id: str
    what: str
    dr_profile: str
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskSpec:
    """One task of the study: its training base command and where it is scored.

    Attributes:
        name: ``balance`` or ``grasp`` (``--task`` of ``scripts/transfer_study.py``).
        task_id: The registered task every arm trains (``--task`` of ``scripts/train.py``).
        max_iterations: The study's budget in PPO iterations (equal for every arm of the task and device).
        num_procs: CPU processes sharing the envs (``--num_procs``; 1 = one process).
        suite: The suite file the exports are scored on (``configs/suites/``).
        metric: The Play and suite metric: ``survival`` (balance) or ``success`` (grasp).
        arms: The arms, in the page's order.
    """

    name: str
    task_id: str
    max_iterations: int
    num_procs: int
    suite: str
    metric: str
    arms: tuple[Arm, ...]

    def arm(self, arm_id: str) -> Arm:
        """The arm ``arm_id`` (KeyError when the task has none)."""
        return {a.id: a for a in self.arms}[arm_id]


def _shared(*tail: Arm) -> tuple[Arm, ...]:
    """Arms (a), (b), (c0) (the same profiles for both tasks), then the task's own."""
    return (
        Arm("a", "Isaac Lab's ideal implicit PD, no delay, no randomization", "ablation_a"),
        Arm("b", "the explicit chain, no delay, no randomization", "ablation_b"),
        Arm("c0", "the shipped recipe: chain + the datasheet's delay, no randomization", "none"),
        *tail,
    )


TASKS: dict[str, TaskSpec] = {
    "balance": TaskSpec(
        name="balance",
        task_id="Realgap-Balance-G1-Crouch-v0",
        max_iterations=150,  # the symmetry export ran 151 in 30 CPU-minutes
        num_procs=1,
        suite="g1_v1.yaml",
        metric="survival",
        arms=_shared(
            Arm("c", "the chain + delay (the nominal range)", "ablation_g1_c"),
            Arm("d", "(c) + actuator randomization", "ablation_g1_d"),
            Arm("e", "(d) + consistent inertia randomization", "ablation_g1_e"),
            Arm("f", "(e) + contact randomization", "ablation_g1_f"),
            Arm("g", "all of it (nominal: (f) + its pushes)", "nominal"),
            Arm("h", "wide", "wide"),
            Arm(
                "gh",
                "(g) + a quarter of the robots behind a bridge that holds each command's PD torque",
                "nominal_holding",
            ),
            Arm(
                "hw",
                "wide under a width curriculum (item 3's lever: (h) learns too little at full width)",
                "wide_curriculum",
            ),
            Arm(
                "gm",
                "(gh) with targets set about the measured joint positions (item 5's lever for the holding bridge)",
                "nominal_holding",
                ("env.actions.joint_pos.relative_to=measured",),
            ),
            Arm(
                "gho",
                "(gh) with the last 4 policy steps of every observation term (item 5's lever: tell a held drive apart)",
                "nominal_holding",
                ("env.observations.policy.history_length=4",),
            ),
        ),
    ),
    "grasp": TaskSpec(
        name="grasp",
        task_id="Realgap-Grasp-Franka-EEPoseDelta-v0",
        max_iterations=450,  # the shipped grasp: 453 in 40 CPU-minutes on two processes
        num_procs=2,
        suite="panda_grasp_v1.yaml",
        metric="success",
        arms=_shared(
            Arm("c", "the chain + delay (the nominal range)", "ablation_grasp_c"),
            Arm("d", "(c) + actuator randomization", "ablation_grasp_d"),
            Arm("e", "(d) + consistent inertia randomization", "ablation_grasp_e"),
            Arm("g", "all of it (grasp_nominal)", "grasp_nominal"),
            Arm("h", "wide (grasp_wide)", "grasp_wide"),
            Arm(
                "hw",
                "grasp_wide under a width curriculum moved by grasp success (item 3's lever: (h) learned too little "
                "at full width at one seed of two)",
                "grasp_wide_curriculum",
            ),
        ),
    ),
}
"""Every arm this command runs, per task (docs/results/transfer.md)."""

_ARM_I = (
    "arm (i) (identify-then-train) is not run by this command: its profile comes from one suite robot's log "
    "(docs/results/transfer.md, arm (i): log, identify --delay_per_joint, then train with the written profile)"
)
LEFT_OUT: dict[str, dict[str, str]] = {
    "balance": {"i": _ARM_I},
    "grasp": {
        "f": "grasp arm (f) is arm (g): grasp_nominal has no section beyond (f) but the object placement; run g",
        "i": _ARM_I,
    },
}
"""Arms of the page this command does not run, per task, with the reason (the refusal's message)."""


def task_spec(name: str) -> TaskSpec:
    """The study's task ``name``.

    Raises:
        ValueError: Not a task of the study (names the known ones).
    """
    if name not in TASKS:
        raise ValueError(f"--task {name!r} is not a task of the transfer study; known: {', '.join(TASKS)}")
    return TASKS[name]


def parse_arms(spec: TaskSpec, text: str) -> list[Arm]:
    """``--arms``: comma-separated arm ids of ``spec``, each once, in the order given.

    Raises:
        ValueError: An empty list, an arm given twice, one left out (:data:`LEFT_OUT`, with its reason) or unknown
            (names it and the known ones).
    """
    ids = [item.strip() for item in text.split(",")]
    known = ", ".join(a.id for a in spec.arms)
    if not text.strip() or "" in ids:
        raise ValueError(f"--arms {text!r}: an empty arm id; give e.g. --arms a,b,g,h (known for {spec.name}: {known})")
    if twice := sorted({i for i in ids if ids.count(i) > 1}):
        raise ValueError(f"--arms {text!r} lists {', '.join(twice)} more than once: give each arm once")
    arms = []
    for arm_id in ids:
        if arm_id in LEFT_OUT[spec.name]:
            raise ValueError(f"--arms {text!r}: {LEFT_OUT[spec.name][arm_id]}")
        if arm_id not in {a.id for a in spec.arms}:
            raise ValueError(f"--arms {text!r}: unknown arm {arm_id!r} for {spec.name}; known: {known}")
        arms.append(spec.arm(arm_id))
    return arms


def parse_study_seeds(text: str) -> list[int]:
    """``--seeds``: comma-separated training seeds, each once, in 1 … :data:`MAX_SEED` (the page's seeds are 1, 2,
    3, more: 4, 5, …).

    Raises:
        ValueError: Not integers, none, a seed given twice or outside the range (names it).
    """
    seeds = parse_seeds(text)
    if not seeds:
        raise ValueError(f"--seeds {text!r} trains nothing: give the training seeds, e.g. --seeds 1,2,3")
    if twice := sorted({s for s in seeds if seeds.count(s) > 1}):
        raise ValueError(f"--seeds {text!r} lists {', '.join(map(str, twice))} more than once: give each seed once")
    if outside := [s for s in seeds if not 1 <= s <= MAX_SEED]:
        raise ValueError(
            f"--seeds {text!r}: {', '.join(map(str, outside))} outside 1-{MAX_SEED} (the study trains seeds 1, 2, "
            f"3, …; seeds from 10 000 are the suite's robots)"
        )
    return seeds
