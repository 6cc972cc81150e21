"""Contacts on the mesh: snap requested points to the surface and reject those beyond a tolerance.

The snapped surface points become massless simulation points of their own (learned_map's
extra_points), so a force or a velocity condition acts exactly at the surface point nearest the
request; `nearest_sample_distance` reports how far the nearest mass-carrying sample is.

The tolerance is a fraction of the mesh's bounding-box diagonal (a contact 1 mm off a scanned
surface is fine; one 20 cm away from a 30 cm laptop is a mistake). The distance is measured to the
exact triangle surface of the input mesh (surface_index.SurfaceIndex, an AABB tree).
"""
from __future__ import annotations

import numpy as np

from neurok_ros.simulation.surface_index import SurfaceIndex


def surface_index(instance) -> SurfaceIndex:
    """The instance's SurfaceIndex, built on first use and kept on the instance (one AABB tree per
    encoded mesh, however many actions it gets)."""
    index = instance.__dict__.get("_surface_index")
    if index is None:
        index = instance.__dict__["_surface_index"] = SurfaceIndex(instance.vertices, instance.faces)
    return index


def snap_to_surface(vertices, faces, points, tolerance: float, what: str = "contact",
                    index: SurfaceIndex | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Closest surface points of `points` (C, 3) and their distances; ActionError when one is not
    finite or farther than tolerance * the bounding-box diagonal, naming the distance. index: a
    SurfaceIndex of (vertices, faces) to reuse (built here when None)."""
    return (index or SurfaceIndex(vertices, faces)).snap(points, tolerance, what)


def nearest_sample_distance(sample_points, points) -> np.ndarray:
    """(C,) distance from each point (C, 3) to its nearest sample (n, 3), same units."""
    from scipy.spatial import cKDTree

    distance, _ = cKDTree(np.asarray(sample_points, dtype=np.float64)).query(np.asarray(points, dtype=np.float64))
    return np.asarray(distance).reshape(-1)
