"""Process-group setup for torchrun (DDP): gloo on the CPU, nccl on CUDA; a no-op single process."""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from neurok_ros.errors import NeurokInputError


@dataclass
class DistributedContext:
    rank: int
    world_size: int
    local_rank: int
    device: torch.device
    owns_group: bool  # this module started the process group and must end it

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def resolve_device(preference: str, local_rank: int = 0) -> torch.device:
    """"auto" -> CUDA when available, else CPU; "cuda" without a GPU is an input error."""
    if preference not in ("auto", "cpu", "cuda"):
        raise NeurokInputError(f"device {preference!r} is not one of auto, cpu, cuda")
    if preference == "cuda" and not torch.cuda.is_available():
        raise NeurokInputError("--device cuda requested but no CUDA device is available")
    if preference == "cpu" or not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda", local_rank)


def setup_distributed(device_preference: str = "auto") -> DistributedContext:
    """Join the torchrun process group when WORLD_SIZE > 1 in the environment."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = resolve_device(device_preference, local_rank)
    owns = False
    if world_size > 1:
        if device.type == "cuda":
            torch.cuda.set_device(device)
        else:
            local_world = int(os.environ.get("LOCAL_WORLD_SIZE", str(world_size)))
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // local_world))
        if not dist.is_initialized():
            dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
            owns = True
    return DistributedContext(rank, world_size, local_rank, device, owns)


def all_reduce_sum(tensor: torch.Tensor, context: DistributedContext) -> torch.Tensor:
    """Sum over ranks (in place); identity in a single process."""
    if context.distributed:
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor


def barrier(context: DistributedContext) -> None:
    if context.distributed:
        dist.barrier()


def teardown_distributed(context: DistributedContext) -> None:
    if context.owns_group and dist.is_initialized():
        dist.destroy_process_group()
