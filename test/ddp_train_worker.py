"""Run by torchrun in test_ddp_training.py: train a few steps, then save this rank's parameters.

usage: python -m torch.distributed.run --nproc_per_node 2 test/ddp_train_worker.py DATA CONFIG OUT STEPS
"""
import os
import sys
from pathlib import Path

import torch

from neurok_ros.training.run_config import load_run_config
from neurok_ros.training.trainer import train

if __name__ == "__main__":
    data, config, out, steps = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    result = train(data, load_run_config(config), out / "model.pt", device="cpu", steps=steps, progress=False)
    rank = int(os.environ["RANK"])
    state = {k: v.detach().cpu() for k, v in result.model.state_dict().items()}
    torch.save({"state": state, "step": result.step, "world_size": int(os.environ["WORLD_SIZE"])},
               out / f"rank{rank}.pt")
