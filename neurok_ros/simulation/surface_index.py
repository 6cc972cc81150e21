"""Closest points on a mesh surface: contacts snapped to the surface and checked against the
tolerance (predict_motion, and the node before any simulation time is spent), and RViz clicks
turned into pushes along the surface normal.

SurfaceIndex keeps an AABB tree of the mesh (libigl), built once per mesh (~40 ms for 20k faces), so
each query costs well under a millisecond. The tolerance has the meaning of contact_tolerance in
config/simulation.yaml: a fraction of the bounding-box diagonal. Arrays are in the mesh frame, metres.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import ActionError


@dataclass
class SurfaceProjection:
    """distances (C,) m from each point to the surface; closest (C, 3) surface points;
    faces (C,) the face each closest point lies on; normals (C, 3) their unit face normals."""

    distances: np.ndarray
    closest: np.ndarray
    faces: np.ndarray
    normals: np.ndarray


def _format_point(p) -> str:
    return "(" + ", ".join(f"{c:.4g}" for c in p) + ")"


class SurfaceIndex:
    """Closest-point queries on one triangle mesh, V (n, 3), F (m, 3)."""

    def __init__(self, vertices: np.ndarray, faces: np.ndarray):
        import igl

        self.vertices = np.ascontiguousarray(vertices, dtype=np.float64)
        self.faces = np.ascontiguousarray(faces, dtype=np.int64)
        self.diagonal = float(np.linalg.norm(self.vertices.max(axis=0) - self.vertices.min(axis=0)))
        self._tree = igl.AABB()
        self._tree.init(self.vertices, self.faces)

    def project(self, points) -> SurfaceProjection:
        """Closest surface points of points (C, 3)."""
        P = np.ascontiguousarray(np.asarray(points, dtype=np.float64).reshape(-1, 3))
        squared, face_ids, closest = self._tree.squared_distance(self.vertices, self.faces, P)
        corners = self.vertices[self.faces[face_ids]]
        normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        length = np.linalg.norm(normals, axis=1, keepdims=True)
        normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
        return SurfaceProjection(np.sqrt(np.maximum(squared, 0.0)), np.asarray(closest), np.asarray(face_ids),
                                 normals)

    def limit(self, tolerance: float) -> float:
        """The largest allowed distance, metres, for a tolerance given as a fraction of the diagonal."""
        return tolerance * self.diagonal

    def snap(self, points, tolerance: float, what: str = "contact") -> tuple[np.ndarray, np.ndarray]:
        """Closest surface points (C, 3) of points (C, 3) and their distances (C,); ActionError for a
        non-finite point or one farther than tolerance x the bounding-box diagonal, naming it."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if not np.all(np.isfinite(points)):
            raise ActionError(f"{what} positions contain NaN or inf")
        proj = self.project(points)
        limit = self.limit(tolerance)
        for i, d in enumerate(proj.distances):
            if d > limit:
                raise ActionError(f"{what} {i} at {_format_point(points[i])} is {d:.4g} m from the "
                                  f"mesh surface; the tolerance is {limit:.4g} m ({tolerance:g} of the "
                                  f"bounding-box diagonal {self.diagonal:.4g} m)")
        return proj.closest, proj.distances

    def check_contacts(self, conditions: ContactConditions, tolerance: float, what: str = "contact") -> np.ndarray:
        """Distances (C,) of the contact positions to the surface; ActionError as in snap."""
        return self.snap(conditions.positions, tolerance, what)[1]

    def push_from_click(self, point, speed: float, tolerance: float) -> ContactConditions:
        """One contact at the surface point nearest `point` (3,), initial velocity `speed` m/s along
        the inward normal (the negative face normal of a consistently outward-oriented mesh; a click
        off the surface pushes from the side it was made on). ActionError when the click is not
        finite or farther than the tolerance."""
        p = np.asarray(point, dtype=np.float64).reshape(3)
        if not np.isfinite(p).all():
            raise ActionError(f"clicked point {p.tolist()} is not finite")
        proj = self.project(p[None])
        distance, limit = float(proj.distances[0]), self.limit(tolerance)
        if distance > limit:
            raise ActionError(f"clicked point {_format_point(p)} is {distance:.4g} m from the mesh surface; the "
                              f"tolerance is {limit:.4g} m ({tolerance:g} of the bounding-box diagonal "
                              f"{self.diagonal:.4g} m)")
        normal = proj.normals[0]
        if not np.any(normal):
            raise ActionError(f"clicked point {_format_point(p)} is nearest a degenerate face: no normal to push along")
        closest = proj.closest[0]
        direction = -normal
        if distance > 1e-6 * self.diagonal and float(np.dot(closest - p, normal)) > 0:
            direction = normal  # the click lies behind the face: push from that side
        return ContactConditions(positions=closest[None], velocities=(speed * direction)[None]).validate()


def project_to_surface(vertices: np.ndarray, faces: np.ndarray, points) -> SurfaceProjection:
    """One-off closest points (builds a SurfaceIndex)."""
    return SurfaceIndex(vertices, faces).project(points)
