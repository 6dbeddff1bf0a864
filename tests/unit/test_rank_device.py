"""One GPU per process under torchrun on CUDA, the CPU unchanged, and a clear error when GPUs are too few.

Pure functions (no GPU needed): the CUDA cases pass the visible GPU count in, or stub torch's CUDA queries.
"""

import pytest

from realgap.envs.sim.physics import check_procs_fit_gpus, rank_device

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("local_rank", [0, 1, 3])
def test_each_rank_gets_its_own_gpu(local_rank):
    # rsl-rl's NCCL path demands exactly cuda:LOCAL_RANK ("Device 'cuda:0' does not match ... local rank '1'")
    assert rank_device("cuda:0", local_rank, num_procs=4, gpu_count=4) == f"cuda:{local_rank}"


def test_single_process_keeps_its_device():
    assert rank_device("cuda:2", 0, num_procs=1, gpu_count=4) == "cuda:2"


@pytest.mark.parametrize("procs", [1, 2, 8])
def test_cpu_processes_stay_on_the_cpu(procs):
    # CPU processes share the machine's cores: no GPU count involved, even with none visible
    assert rank_device("cpu", procs - 1, num_procs=procs, gpu_count=0) == "cpu"


def test_more_processes_than_gpus_is_an_error_naming_the_count():
    with pytest.raises(ValueError, match=r"--num_procs 3 on CUDA needs one GPU per process, but torch sees 2 CUDA"):
        rank_device("cuda:0", 0, num_procs=3, gpu_count=2)
    with pytest.raises(ValueError, match=r"use --num_procs 2 or fewer"):
        check_procs_fit_gpus(3, 2)
    check_procs_fit_gpus(2, 2)  # exactly one GPU each: fine


def test_local_rank_outside_the_processes_is_an_error():
    with pytest.raises(ValueError, match=r"LOCAL_RANK 2 is outside \[0, 2\)"):
        rank_device("cuda:0", 2, num_procs=2, gpu_count=4)


def _fake_gpus(monkeypatch, count: int) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)


def test_process_device_reads_torchrun_environment(monkeypatch):
    from realgap.envs.run.training import process_device

    _fake_gpus(monkeypatch, 2)
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert process_device("cuda") == "cuda:1"
    assert process_device(None) == "cuda:1"  # the default device on a CUDA machine is CUDA
    assert process_device("cpu") == "cpu"


def test_relaunch_refuses_before_starting_any_process(monkeypatch):
    import torch.distributed.run

    from realgap.envs.run.training import relaunch_with_torchrun

    _fake_gpus(monkeypatch, 1)
    started = []
    monkeypatch.setattr(torch.distributed.run, "main", lambda argv: started.append(argv))
    with pytest.raises(ValueError, match="torch sees 1 CUDA device"):
        relaunch_with_torchrun("train.py", ["--device", "cuda", "--num_procs", "2"], 2)
    with pytest.raises(ValueError, match="torch sees 1 CUDA device"):
        relaunch_with_torchrun("train.py", ["--device=cuda:0"], 2)
    assert started == []
    relaunch_with_torchrun("train.py", ["--device", "cpu", "--num_procs", "2"], 2)  # CPU: no GPU needed
    assert started == [
        ["--standalone", "--nproc_per_node=2", "--tee=3", "train.py", "--device", "cpu", "--num_procs", "2"]
    ]


def test_every_process_of_a_run_has_its_own_seed():
    # One seed for all ranks made every process collect the same rollouts (same resets, pushes and exploration noise
    # from the same weights on deterministic CPU physics): N processes learned from one process's samples.
    from realgap.envs.run.training import rank_seed

    assert rank_seed(42, 0) == 42  # a one-process run is seeded exactly as asked
    assert len({rank_seed(42, r) for r in range(8)}) == 8


def test_the_task_seed_is_the_run_seed_and_ranks_reseed_env_agent_and_delays():
    from realgap.envs.run.factory import load_cfgs, set_seed
    from realgap.envs.run.training import rank_seed
    from realgap.envs.sim.actuator import RealgapActuatorCfg

    env_cfg, agent_cfg = load_cfgs("Realgap-Balance-G1-v0", "cpu", 4, None)
    assert env_cfg.seed == agent_cfg.seed == 42  # no --seed: the task's
    set_seed(env_cfg, agent_cfg, rank_seed(agent_cfg.seed, 1))
    delays = [a.seed for a in env_cfg.scene.robot.actuators.values() if isinstance(a, RealgapActuatorCfg)]
    assert env_cfg.seed == agent_cfg.seed == 43 and delays == [43]


def test_a_resumed_run_keeps_its_recorded_seed():
    from realgap.envs.run.training import resumed_seed

    assert resumed_seed(None, {"seed": 4}) == 4  # --resume without --seed: the run's own, not the task's 42
    assert resumed_seed(4, {"seed": 4}) == 4
    assert resumed_seed(None, {}) is None  # recorded before seeds were: the task's, as then
    with pytest.raises(ValueError, match="--seed 5 cannot change a resumed run; it keeps its recorded seed 4"):
        resumed_seed(5, {"seed": 4})
