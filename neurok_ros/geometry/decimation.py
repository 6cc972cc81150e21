"""Decimation of meshes over a vertex budget (open3d), for inputs too large to simulate: quadric
error decimation, preceded by vertex clustering when the input is many times over the budget.

The decimated mesh has NEW vertices (quadric error placement), in open3d's order with unreferenced
vertices dropped; nothing ties them one to one to the input. Callers that decimate must therefore
publish the decimated mesh with the results (the ROS node does, on ~/trajectory_mesh).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.errors import MeshError
from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays


@dataclass
class Decimated:
    """vertices (n', 3) float64 and faces (m', 3) int64 with n' <= the budget; input_vertices and
    input_faces: the sizes before; attempts: decimation passes used."""

    vertices: np.ndarray
    faces: np.ndarray
    input_vertices: int
    input_faces: int
    attempts: int


CLUSTER_FIRST = 4  # inputs over this many times the budget are vertex-clustered first (quadric alone is slow)


def _o3d_mesh(V: np.ndarray, F: np.ndarray):
    import open3d as o3d

    return o3d.geometry.TriangleMesh(o3d.utility.Vector3dVector(V), o3d.utility.Vector3iVector(F.astype(np.int32)))


def _arrays(mesh) -> tuple[np.ndarray, np.ndarray]:
    mesh.remove_degenerate_triangles()
    mesh.remove_unreferenced_vertices()
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.triangles, dtype=np.int64)


def _quadric(V: np.ndarray, F: np.ndarray, target_faces: int) -> tuple[np.ndarray, np.ndarray]:
    return _arrays(_o3d_mesh(V, F).simplify_quadric_decimation(target_number_of_triangles=int(target_faces)))


def _cluster(V: np.ndarray, F: np.ndarray, target_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """Vertex clustering on a voxel grid sized for about target_vertices surface vertices: ~6 s for
    2M vertices where quadric decimation alone takes minutes."""
    import open3d as o3d

    mesh = _o3d_mesh(V, F)
    voxel = float(np.sqrt(mesh.get_surface_area() / max(target_vertices, 1)))
    if not voxel > 0:
        return V, F
    return _arrays(mesh.simplify_vertex_clustering(voxel_size=voxel,
                                                   contraction=o3d.geometry.SimplificationContraction.Average))


def decimate_to_vertices(vertices, faces, max_vertices: int, max_attempts: int = 4) -> Decimated:
    """Decimate to at most max_vertices vertices; MeshError with the reason when that fails
    (open3d missing, nothing left, budget not reached after max_attempts passes)."""
    if max_vertices < 4:
        raise MeshError(f"cannot decimate to {max_vertices} vertices: at least 4 are needed")
    V, F = validate_mesh_arrays(vertices, faces)
    if len(V) <= max_vertices:
        return Decimated(V, F, len(V), len(F), 0)
    try:
        import open3d  # noqa: F401
    except Exception as exc:  # ImportError, or OSError when libusb-1.0 is missing
        raise MeshError(f"mesh has {len(V)} vertices, over max_vertices {max_vertices}, and decimation "
                        f"needs open3d, which does not import here ({exc})") from None
    source_V, source_F = V, F
    if len(V) > CLUSTER_FIRST * max_vertices:
        try:
            Vc, Fc = _cluster(V, F, CLUSTER_FIRST * max_vertices)
        except Exception as exc:
            raise MeshError(f"decimation of {len(V)} vertices to {max_vertices} failed: {exc}") from None
        if len(Fc) > 0 and max_vertices < len(Vc) < len(V):
            source_V, source_F = Vc, Fc
        elif len(Fc) > 0 and 4 <= len(Vc) <= max_vertices:
            Vc, Fc = validate_mesh_arrays(Vc, Fc)
            return Decimated(Vc, Fc, len(V), len(F), 1)
    # A closed triangle mesh has about twice as many faces as vertices; aim a little under the budget.
    target = max(4, int(1.9 * max_vertices))
    Vd, Fd = V, F
    for attempt in range(1, max_attempts + 1):
        try:
            Vd, Fd = _quadric(source_V, source_F, target)
        except Exception as exc:
            raise MeshError(f"decimation of {len(V)} vertices to {max_vertices} failed: {exc}") from None
        if len(Fd) == 0 or len(Vd) == 0:
            raise MeshError(f"decimation of {len(V)} vertices to {max_vertices} left no triangles")
        if len(Vd) <= max_vertices:
            Vd, Fd = validate_mesh_arrays(Vd, Fd)
            return Decimated(Vd, Fd, len(V), len(F), attempt)
        target = max(4, int(target * 0.9 * max_vertices / len(Vd)))
    raise MeshError(f"decimation of {len(V)} vertices kept {len(Vd)} after {max_attempts} passes, "
                    f"over max_vertices {max_vertices}")
