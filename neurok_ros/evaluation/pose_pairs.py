"""Which instances and which pose pairs the evaluation uses; deterministic given a seed.

Per category of the split (the category is the file name before its last "_"), up to N instances
are chosen by a seeded permutation of the sorted file names. Per chosen instance, one pair of
distinct poses (a, b) is drawn among its rest pose (index 0) and frames (index t + 1): SOURCE = pose
a, TARGET = pose b. Every draw is seeded by (seed, a CRC of the category or file name), so a pair
does not depend on which other files or categories are evaluated.
"""
from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass

import numpy as np

from neurok_ros.data.instance_format import Instance
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.geometry.visibility import orbit_camera, visible_samples
from neurok_ros.training.similarity import axis_angle_matrix

TARGET_SAMPLES = 2048


@dataclass(frozen=True)
class PosePair:
    """file: instance file name in the dataset folder; category; pose_a (SOURCE) and pose_b (TARGET):
    0 = rest pose, t + 1 = frame t; num_poses = frames + 1."""

    file: str
    category: str
    pose_a: int
    pose_b: int
    num_poses: int

    def to_dict(self) -> dict:
        return asdict(self)


def category_of(file_name: str) -> str:
    """"laptop_0012.npz" -> "laptop" (the dataset's naming: category + "_" + index)."""
    stem = file_name.rsplit("/", 1)[-1]
    stem = stem[:-4] if stem.endswith(".npz") else stem
    return stem.rsplit("_", 1)[0]


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode())])


def select_files(files: list[str], per_category: int | None, seed: int) -> list[str]:
    """Up to per_category files of each category (None: all), ordered by category then choice."""
    if per_category is not None and per_category < 1:
        raise NeurokInputError(f"pairs per category must be positive, got {per_category}")
    by_category: dict[str, list[str]] = {}
    for name in sorted(set(files)):
        by_category.setdefault(category_of(name), []).append(name)
    chosen = []
    for category in sorted(by_category):
        names = by_category[category]
        order = _rng(seed, "category:" + category).permutation(len(names))
        count = len(names) if per_category is None else min(per_category, len(names))
        chosen.extend(names[i] for i in order[:count])
    return chosen


def choose_poses(file_name: str, num_poses: int, seed: int) -> tuple[int, int]:
    """Two distinct pose indices (a, b) in [0, num_poses), seeded by (seed, file name)."""
    if num_poses < 2:
        raise NeurokInputError(f"{file_name}: {num_poses} pose(s); a pose pair needs at least 2")
    a, b = _rng(seed, "poses:" + file_name).choice(num_poses, size=2, replace=False)
    return int(a), int(b)


def pose_pair(file_name: str, instance: Instance, seed: int) -> PosePair:
    num_poses = instance.num_frames + 1
    a, b = choose_poses(file_name, num_poses, seed)
    return PosePair(file_name, category_of(file_name), a, b, num_poses)


def pair_meshes(instance: Instance, pair: PosePair) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(SOURCE (n, 3) float64, TARGET (n, 3) float64, faces (m, 3) int64) of a pose pair: poses a and b
    of the instance, its frame and units."""
    return (pose_vertices(instance, pair.pose_a), pose_vertices(instance, pair.pose_b),
            np.asarray(instance.faces, dtype=np.int64))


def pose_vertices(instance: Instance, pose: int) -> np.ndarray:
    """(n, 3) float64 vertices of pose 0 (rest) or t + 1 (frame t), the instance's frame and units."""
    if not 0 <= pose <= instance.num_frames:
        raise IndexError(f"pose {pose} out of range [0, {instance.num_frames}]")
    V = instance.rest_vertices if pose == 0 else instance.frames[pose - 1]
    return np.asarray(V, dtype=np.float64)


def pair_heading(file_name: str, seed: int, up_axis: int = 2) -> np.ndarray:
    """(3, 3) rotation about the up axis (z, the dataset's convention) by a uniform angle seeded by
    (seed, file name): the unknown heading of an object scanned standing on a table. Applied to SOURCE
    and TARGET alike (`neurok eval --random-heading`)."""
    return axis_angle_matrix(np.eye(3)[up_axis], _rng(seed, "heading:" + file_name).uniform(0.0, 2.0 * np.pi))


def target_samples(vertices: np.ndarray, faces: np.ndarray, seed: int, file_name: str = "",
                   count: int = TARGET_SAMPLES, partial_view: bool = False) -> np.ndarray:
    """(count, 3) area-uniform surface samples of TARGET in its own (mesh) frame: all a method sees of
    TARGET (no vertices, no correspondence). partial_view: only the samples visible from one seeded
    camera (pair_camera), as one depth image of the object."""
    rng = _rng(seed, "target:" + file_name)
    if partial_view:
        return visible_samples(vertices, faces, pair_camera(vertices, seed, file_name), count, rng)
    return sample_surface(vertices, faces, count, rng).points


def pair_camera(vertices: np.ndarray, seed: int, file_name: str = "") -> np.ndarray:
    """(3,) a camera two bounding-box diagonals from TARGET's ((n, 3) vertices) box centre, at a
    uniform azimuth and 15-45 degrees above the horizon, seeded by (seed, file name): a robot's depth
    camera looking down at an object on a table (`neurok eval --partial-view`)."""
    rng = _rng(seed, "camera:" + file_name)
    return orbit_camera(vertices, rng.uniform(0.0, 2.0 * np.pi), np.radians(rng.uniform(15.0, 45.0)))
