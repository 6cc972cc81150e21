"""One 4D instance = one compressed .npz file with fixed topology over T frames.

Arrays (n vertices, F faces, T frames, J joints):
  rest_vertices            (n, 3)    float32, metres, object frame: the pose every frame is relative to
  faces                    (F, 3)    int32, shared by all frames
  frames                   (T, n, 3) float32, metres, object frame
  times                    (T,)      float32, seconds
  vertex_dual_quaternions  (T, n, 8) float32, unit dual quaternion taking rest_vertices[i] to frames[t, i]
                                     (exact per part for articulated; one-ring Kabsch fit otherwise)
  part_ids                 (n,)      int32, rigid part of each vertex (articulated) or 0
  joint_values             (T, J)    float32, radians (revolute) or metres (prismatic); (T, 0) if none
  pinned                   (n,)      bool, vertices held fixed by the simulation (cloth pins, clamps)
Strings (0-d unicode arrays, loadable with allow_pickle=False):
  category   e.g. "laptop", "cloth_hanging"
  kind       "articulated" | "elastic" | "cloth"
  joints     JSON list of {"name", "type": "revolute"|"prismatic", "axis": [3], "pivot": [3],
             "range": [lo, hi], "parent_part": int, "child_parts": [int, ...]}
  generator  JSON {"name", "version", "seed", "params": {...}}

Files are written byte-for-byte deterministically (fixed zip timestamps, fixed member order), so the
same seed gives identical datasets.
"""
from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from neurok_ros.errors import NeurokInputError

KINDS = ("articulated", "elastic", "cloth")
DATASET_VERSION = "1"
_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass
class Instance:
    """A 4D mesh sequence; see the module docstring for shapes and units."""

    category: str
    kind: str
    rest_vertices: np.ndarray
    faces: np.ndarray
    frames: np.ndarray
    times: np.ndarray
    vertex_dual_quaternions: np.ndarray
    part_ids: np.ndarray | None = None
    joint_values: np.ndarray | None = None
    pinned: np.ndarray | None = None
    joints: list = field(default_factory=list)
    generator: dict = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.rest_vertices)
        T = len(self.frames)
        self.rest_vertices = np.asarray(self.rest_vertices, dtype=np.float32)
        self.faces = np.asarray(self.faces, dtype=np.int32)
        self.frames = np.asarray(self.frames, dtype=np.float32)
        self.times = np.asarray(self.times, dtype=np.float32)
        self.vertex_dual_quaternions = np.asarray(self.vertex_dual_quaternions, dtype=np.float32)
        self.part_ids = np.zeros(n, np.int32) if self.part_ids is None else np.asarray(self.part_ids, np.int32)
        self.joint_values = (np.zeros((T, 0), np.float32) if self.joint_values is None
                             else np.asarray(self.joint_values, np.float32).reshape(T, -1))
        self.pinned = np.zeros(n, bool) if self.pinned is None else np.asarray(self.pinned, bool)

    @property
    def num_frames(self) -> int:
        return len(self.frames)

    @property
    def num_vertices(self) -> int:
        return len(self.rest_vertices)


def save_instance(path: str | Path, inst: Instance) -> None:
    """Write `inst` as a deterministic compressed .npz."""
    arrays = {
        "rest_vertices": inst.rest_vertices,
        "faces": inst.faces,
        "frames": inst.frames,
        "times": inst.times,
        "vertex_dual_quaternions": inst.vertex_dual_quaternions,
        "part_ids": inst.part_ids,
        "joint_values": inst.joint_values,
        "pinned": inst.pinned,
        "category": np.array(inst.category),
        "kind": np.array(inst.kind),
        "joints": np.array(json.dumps(inst.joints, sort_keys=True)),
        "generator": np.array(json.dumps(inst.generator, sort_keys=True)),
    }
    path = Path(path)
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buffer.getvalue(), compresslevel=6)
    tmp.replace(path)


def load_instance(path: str | Path) -> Instance:
    """Read an instance written by `save_instance` (no pickles are ever loaded)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return Instance(
                category=str(data["category"]),
                kind=str(data["kind"]),
                rest_vertices=data["rest_vertices"],
                faces=data["faces"],
                frames=data["frames"],
                times=data["times"],
                vertex_dual_quaternions=data["vertex_dual_quaternions"],
                part_ids=data["part_ids"],
                joint_values=data["joint_values"],
                pinned=data["pinned"],
                joints=json.loads(str(data["joints"])),
                generator=json.loads(str(data["generator"])),
            )
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise NeurokInputError(f"{path}: not a readable NeuROK instance file ({exc})") from exc


def validate_instance(inst: Instance) -> list[str]:
    """Problems with an instance, one line each; an empty list means it is valid."""
    problems = []
    n, T = inst.num_vertices, inst.num_frames
    if inst.kind not in KINDS:
        problems.append(f"kind {inst.kind!r} is not one of {KINDS}")
    if n == 0 or len(inst.faces) == 0:
        problems.append("empty mesh")
    if inst.frames.shape != (T, n, 3) or T < 2:
        problems.append(f"frames shape {inst.frames.shape}, expected (T>=2, {n}, 3)")
    if inst.vertex_dual_quaternions.shape != (T, n, 8):
        problems.append(f"dual quaternions shape {inst.vertex_dual_quaternions.shape}, expected ({T}, {n}, 8)")
    if inst.times.shape != (T,):
        problems.append(f"times shape {inst.times.shape}, expected ({T},)")
    elif T > 1 and not np.all(np.diff(inst.times) > 0):
        problems.append("times are not increasing")
    if inst.faces.size and (inst.faces.min() < 0 or inst.faces.max() >= n):
        problems.append("face index out of range")
    for name in ("rest_vertices", "frames", "vertex_dual_quaternions", "joint_values"):
        if not np.all(np.isfinite(getattr(inst, name))):
            problems.append(f"{name} contains NaN or inf")
    if inst.part_ids.shape != (n,) or inst.pinned.shape != (n,):
        problems.append("part_ids or pinned does not have one entry per vertex")
    if inst.joint_values.shape[1] != len(inst.joints):
        problems.append(f"{inst.joint_values.shape[1]} joint value columns for {len(inst.joints)} joints")
    return problems
