"""Read an observed point set (a scan) from a file: (M, 3) float64, the file's frame and units.

Formats, by suffix:
- .pcd (PCL, as ROS tools write it) through open3d; .xyz / .txt / .pts: whitespace columns x y z
  (further columns, such as colour or intensity, are ignored); .npy: an (M, >= 3) array, loaded
  without pickle.
- .ply: its vertices when it has no faces (a point cloud), else its surface, sampled.
- The other mesh formats of mesh_io (obj, stl, off, glb, gltf): the surface, sampled area-uniformly.
A surface is sampled with `mesh_samples` points, so a scanned mesh counts by its area, not by how
finely it was triangulated. Points with a non-finite coordinate (the no-return pixels of an organised
depth cloud) are dropped and counted, as PCL's removeNaNFromPointCloud would.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from neurok_ros.errors import MeshError, NeurokInputError
from neurok_ros.geometry.mesh_io import MESH_FILE_TYPES, load_mesh
from neurok_ros.geometry.surface_sampling import sample_surface

POINT_FILE_TYPES = ("pcd", "xyz", "txt", "pts", "npy")
MIN_POINTS = 16


def _ply(data: bytes, name: str, mesh_samples: int, rng: np.random.Generator) -> np.ndarray:
    """A PLY's vertices (no faces) or its sampled surface."""
    import trimesh

    try:
        loaded = trimesh.load(io.BytesIO(data), file_type="ply", process=False)
    except Exception as exc:  # trimesh raises many kinds of errors on malformed input
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NeurokInputError(f"{name}: could not read it as PLY: {reason}") from None
    faces = np.asarray(getattr(loaded, "faces", np.zeros((0, 3))))
    vertices = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))), dtype=np.float64)
    if len(faces) == 0:
        return vertices
    try:
        return sample_surface(vertices, faces, mesh_samples, rng).points
    except MeshError as exc:  # bad indices, non-finite vertices, no area
        raise NeurokInputError(f"{name}: {exc}") from None


def _columns(path: Path) -> np.ndarray:
    """x y z from the first three columns of a text file (comment lines start with #)."""
    try:
        table = np.loadtxt(path, dtype=np.float64, comments="#", ndmin=2)
    except ValueError as exc:
        raise NeurokInputError(f"{path}: could not read it as x y z columns: {str(exc).splitlines()[0]}") from None
    return table


def _array(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:  # an object array, or not an .npy file
        raise NeurokInputError(f"{path}: could not read it as a numeric .npy array: "
                               f"{str(exc).splitlines()[0]}") from None


def _pcd(path: Path) -> np.ndarray:
    import open3d as o3d

    cloud = o3d.io.read_point_cloud(str(path), format="pcd", print_progress=False)
    return np.asarray(cloud.points, dtype=np.float64)


def load_points(path, mesh_samples: int = 100_000, seed: int = 0) -> tuple[np.ndarray, int]:
    """The observed points of a scan file, (M, 3) float64 in the file's frame and units with M >=
    MIN_POINTS, and how many points were dropped for a non-finite coordinate.

    Raises FileNotFoundError for a missing file and NeurokInputError (naming the file) for an unknown
    format, unreadable content, a table without three columns, or fewer than MIN_POINTS finite points.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    kind = path.suffix.lower().lstrip(".")
    rng = np.random.default_rng(seed)
    if kind == "ply":
        points = _ply(path.read_bytes(), str(path), mesh_samples, rng)
    elif kind in ("xyz", "txt", "pts"):
        points = _columns(path)
    elif kind == "npy":
        points = _array(path)
    elif kind == "pcd":
        points = _pcd(path)
    elif kind in MESH_FILE_TYPES:  # load_mesh's MeshError names the file
        points = sample_surface(*load_mesh(path), mesh_samples, rng).points
    else:
        raise NeurokInputError(f"{path}: unsupported scan format {path.suffix!r}; expected one of "
                               f"{', '.join(POINT_FILE_TYPES + MESH_FILE_TYPES)}")
    points = np.asarray(points)
    if points.ndim != 2 or points.shape[1] < 3 or not np.issubdtype(points.dtype, np.number):
        raise NeurokInputError(f"{path}: expected (M, 3) numeric points, got an array of shape "
                               f"{points.shape} and type {points.dtype}")
    points = points[:, :3].astype(np.float64)
    finite = np.isfinite(points).all(axis=1)
    if int(finite.sum()) < MIN_POINTS:
        raise NeurokInputError(f"{path}: {int(finite.sum())} finite points (of {len(points)}); a scan needs "
                               f"at least {MIN_POINTS}")
    return points[finite], int(len(points) - finite.sum())
