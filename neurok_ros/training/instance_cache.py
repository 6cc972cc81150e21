"""Lazy, size-bounded LRU cache of 4D instances as pose sequences ready for pair sampling."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neurok_ros.data.instance_format import Instance, load_instance
from neurok_ros.geometry import dual_quaternion as dq


@dataclass
class PoseSequence:
    """The poses one instance can take, the rest pose first.

    faces: (F, 3) int64; positions: (P, n, 3) float32, metres, object frame (P = T + 1, pose 0 = rest);
    dual_quaternions: (P, n, 8) float32, rest -> pose p per vertex (pose 0: identity)."""

    faces: np.ndarray
    positions: np.ndarray
    dual_quaternions: np.ndarray
    category: str

    @property
    def num_poses(self) -> int:
        return len(self.positions)

    @property
    def nbytes(self) -> int:
        return self.faces.nbytes + self.positions.nbytes + self.dual_quaternions.nbytes


def pose_sequence(instance: Instance) -> PoseSequence:
    """Rest pose + every frame of an Instance."""
    n = instance.num_vertices
    positions = np.concatenate([instance.rest_vertices[None], instance.frames]).astype(np.float32)
    rest_dq = dq.identity((1, n))
    dual_quaternions = np.concatenate([rest_dq, instance.vertex_dual_quaternions]).astype(np.float32)
    return PoseSequence(np.asarray(instance.faces, np.int64), positions, dual_quaternions, instance.category)


class InstanceCache:
    """path -> PoseSequence, loaded on first use; least recently used entries are dropped once the
    total exceeds max_megabytes (one entry is always kept). One cache per process (DataLoader
    workers each hold their own)."""

    def __init__(self, max_megabytes: float = 4096.0):
        self.max_bytes = int(max_megabytes * 2 ** 20)
        self._entries: OrderedDict[str, PoseSequence] = OrderedDict()
        self._bytes = 0
        self.loads = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, path: str | Path) -> PoseSequence:
        key = str(path)
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry
        entry = pose_sequence(load_instance(key))
        self.loads += 1
        self._entries[key] = entry
        self._bytes += entry.nbytes
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.nbytes
        return entry
