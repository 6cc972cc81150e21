"""Deterministic, resumable, rank-sharded batches of dataset ids (DistributedSampler-like)."""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np


class ShardedBatchSampler:
    """Infinite batches of global ids `epoch * dataset_size + i` for one rank.

    Every epoch is a fresh permutation of range(dataset_size) seeded by (seed, epoch), tiled when the
    dataset is smaller than one global batch. Global step s uses epoch s // steps_per_epoch; rank r
    of W takes the r-th of the W consecutive batches of that step, so ranks never share a pair within
    a step and a run resumed at step s sees exactly the batches an uninterrupted run would."""

    def __init__(self, dataset_size: int, batch_size: int, rank: int = 0, world_size: int = 1,
                 seed: int = 0, start_step: int = 0):
        if dataset_size < 1:
            raise ValueError("cannot sample batches from an empty dataset")
        self.dataset_size = dataset_size
        self.batch_size = batch_size
        self.rank = rank
        self.world_size = world_size
        self.seed = seed
        self.start_step = start_step
        self.steps_per_epoch = max(1, dataset_size // (batch_size * world_size))

    def epoch_order(self, epoch: int) -> np.ndarray:
        """(steps_per_epoch * world_size * batch_size,) dataset indices of one epoch."""
        needed = self.steps_per_epoch * self.world_size * self.batch_size
        order = np.random.default_rng([self.seed, epoch]).permutation(self.dataset_size)
        return np.resize(order, needed)

    def batch(self, step: int) -> list[int]:
        epoch, within = divmod(step, self.steps_per_epoch)
        order = self.epoch_order(epoch)
        start = (within * self.world_size + self.rank) * self.batch_size
        return [int(epoch * self.dataset_size + i) for i in order[start:start + self.batch_size]]

    def __iter__(self) -> Iterator[list[int]]:
        step = self.start_step
        while True:
            yield self.batch(step)
            step += 1
