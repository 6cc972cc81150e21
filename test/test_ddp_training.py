"""Two-process DDP training on the CPU (gloo) through torchrun: ranks end with identical parameters."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from neurok_ros.config_files import config_path
from neurok_ros.model import NeuROKModel
from neurok_ros.model.checkpoint import load_checkpoint
from neurok_ros.training.sharding import ShardedBatchSampler

sys.path.insert(0, str(Path(__file__).parent))
from toy_kinematic_data import write_toy_dataset  # noqa: E402

pytestmark = pytest.mark.model


def test_sharded_batches_are_disjoint_per_step_and_resumable():
    ranks = [ShardedBatchSampler(50, 4, rank=r, world_size=2, seed=3) for r in range(2)]
    for step in range(20):  # crosses epochs (6 steps per epoch)
        a, b = ranks[0].batch(step), ranks[1].batch(step)
        assert len(a) == len(b) == 4 and not set(a) & set(b)
    resumed = iter(ShardedBatchSampler(50, 4, rank=1, world_size=2, seed=3, start_step=7))
    assert next(resumed) == ranks[1].batch(7)
    # a dataset smaller than one global batch is tiled, never empty
    assert len(ShardedBatchSampler(3, 4, rank=1, world_size=2).batch(0)) == 4


def test_two_process_gloo_training_keeps_ranks_identical(tmp_path):
    data = write_toy_dataset(tmp_path / "data", train=2, val=1, frames=4)
    out = tmp_path / "run"
    out.mkdir()
    worker = Path(__file__).parent / "ddp_train_worker.py"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MASTER_ADDR": "127.0.0.1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(worker),
           str(data), str(config_path("model/tiny.yaml")), str(out), "3"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    states = [torch.load(out / f"rank{r}.pt", weights_only=True) for r in range(2)]
    assert [s["world_size"] for s in states] == [2, 2] and [s["step"] for s in states] == [3, 3]
    checkpoint = load_checkpoint(out / "model.pt")
    for name, tensor in states[0]["state"].items():
        assert torch.equal(tensor, states[1]["state"][name]), name
        assert torch.equal(tensor, checkpoint["model_state"][name]), name
    # training moved the weights (the ranks agree on an update, not on doing nothing)
    torch.manual_seed(0)  # the trainer's initialisation (training.seed = 0)
    initial = NeuROKModel(checkpoint["config"]["model"]).state_dict()
    assert any(not torch.equal(initial[k], v) for k, v in states[0]["state"].items())
    assert checkpoint["step"] == 3 and "val_loss" in checkpoint["metrics"]
