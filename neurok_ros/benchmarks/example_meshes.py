"""Benchmark and test inputs built from the bundled example laptop."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def ten_thousand_vertex_laptop(path: Path, at_least: int = 10_000) -> tuple[np.ndarray, np.ndarray]:
    """The bundled example laptop with at least `at_least` vertices and at most 10% more: subdivided
    past the count, then decimated back toward it; saved to path."""
    import trimesh

    from neurok_ros.geometry.decimation import decimate_to_vertices
    from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
    from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT

    V, F = load_mesh(DEFAULT_CHECKPOINT.parent / "example_laptop.ply")
    while len(V) < at_least:
        V, F = trimesh.remesh.subdivide(V, F)
    budget = at_least
    while len(V) > 1.1 * at_least and budget <= len(V):
        decimated = decimate_to_vertices(V, F, budget)
        if len(decimated.vertices) >= at_least:
            V, F = decimated.vertices, decimated.faces
            break
        budget = int(budget * 1.03) + 1
    save_mesh(path, V, F)
    return np.asarray(V), np.asarray(F)


def lid_turned(V: np.ndarray, angle: float, faces: np.ndarray | None = None) -> np.ndarray:
    """(N, 3) the example laptop's vertices with its lid turned by `angle` radians about the hinge (the
    x axis through the lid's lowest corner); same order. The lid: with faces, every connected piece
    that reaches above 30% of the height, whole (a rigid lid, as a real laptop's); without, the
    vertices above 30% of the height (the lid's lowest strip then stays behind: a bent lid)."""
    turned = np.array(V, dtype=np.float64, copy=True)
    lid = turned[:, 2] > turned[:, 2].min() + 0.3 * (turned[:, 2].max() - turned[:, 2].min())
    if faces is not None:
        from neurok_ros.geometry.rigid_pieces import vertex_pieces

        pieces = vertex_pieces(faces, len(turned))
        if (pieces >= 0).any():
            lid = np.isin(pieces, np.unique(pieces[lid & (pieces >= 0)]))
    c, s = math.cos(angle), math.sin(angle)
    pivot = turned[lid].min(axis=0)
    local = turned[lid] - pivot
    turned[lid] = pivot + np.stack([local[:, 0], c * local[:, 1] - s * local[:, 2],
                                    s * local[:, 1] + c * local[:, 2]], 1)
    return turned
