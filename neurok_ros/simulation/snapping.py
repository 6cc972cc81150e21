"""Contacts on the mesh: snap requested points to the surface and reject those beyond a tolerance.

The snapped surface points become massless simulation points of their own (learned_map's
extra_points), so a force or a velocity condition acts exactly at the surface point nearest the
request; `nearest_sample_distance` reports how far the nearest mass-carrying sample is.

The tolerance is a fraction of the mesh's bounding-box diagonal (a contact 1 mm off a scanned
surface is fine; one 20 cm away from a 30 cm laptop is a mistake). The distance is measured to the
exact triangle surface of the input mesh.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.errors import ActionError


def bounding_diagonal(vertices) -> float:
    """Length of the axis-aligned bounding box's diagonal, mesh units."""
    V = np.asarray(vertices, dtype=np.float64)
    return float(np.linalg.norm(V.max(axis=0) - V.min(axis=0)))


def closest_surface_points(vertices, faces, points) -> tuple[np.ndarray, np.ndarray]:
    """(C, 3) closest points on the triangle surface and their distances (C,) to `points` (C, 3)."""
    import trimesh

    mesh = trimesh.Trimesh(np.asarray(vertices, dtype=np.float64), np.asarray(faces), process=False)
    closest, distance, _ = trimesh.proximity.closest_point(mesh, np.asarray(points, dtype=np.float64))
    return np.asarray(closest), np.asarray(distance)


def snap_to_surface(vertices, faces, points, tolerance: float, what: str = "contact"
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Closest surface points of `points` (C, 3); ActionError when one is farther than
    tolerance * the bounding-box diagonal, naming the distance."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if not np.all(np.isfinite(points)):
        raise ActionError(f"{what} positions contain NaN or inf")
    diagonal = bounding_diagonal(vertices)
    limit = tolerance * diagonal
    closest, distance = closest_surface_points(vertices, faces, points)
    for i, d in enumerate(distance):
        if d > limit:
            p = ", ".join(f"{c:.4g}" for c in points[i])
            raise ActionError(
                f"{what} {i} at ({p}) is {d:.4g} m from the mesh surface; the tolerance is {limit:.4g} m "
                f"({tolerance:g} of the bounding-box diagonal {diagonal:.4g} m)")
    return closest, distance


def nearest_sample_distance(sample_points, points) -> np.ndarray:
    """(C,) distance from each point (C, 3) to its nearest sample (n, 3), same units."""
    from scipy.spatial import cKDTree

    distance, _ = cKDTree(np.asarray(sample_points, dtype=np.float64)).query(np.asarray(points, dtype=np.float64))
    return np.asarray(distance).reshape(-1)
