"""Slide guides: a sliding part slides the way its guide lets it, not into the guide's sides.

    articulation = slide_guides(vertices, faces, articulation)

A sash in a hung window slides up and down its track; read sideways (the head's vote for a slider
window), it runs into the jambs within a few centimetres. The geometry says which way is free: the
moving subtree's surface samples are swept along the joint's axis and along candidate directions,
each way, until they run into the rest of the object
(contact_limits.swept_stop). A prismatic joint is **blocked** when its total travel is under
`blocked` times the part's own extent along its axis. The candidate directions are the principal
directions of the moving part and of the whole object (manufactured things slide along their own
edges). A blocked slide takes the nearest candidate within `near_degrees` that is not blocked (a
drawer read 24 degrees askew runs into the carcass; straight, it pulls out). Without one, it slides
along the candidate that is bounded both ways (a track with two ends) and lets the part travel the
most of its own extent, at least `free` times it, and the two stops become its limits. A joint that
travels freely one way or has no better direction is left as it is, and so is every joint where
the rest of the object is not closed (no inside to run into). Input and output in the mesh frame
and units.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.contact_limits import swept_part, swept_stop
from neurok_ros.articulation.head_readout import principal_directions


def slide_guides(vertices: np.ndarray, faces: np.ndarray, articulation: Articulation, blocked: float = 0.25,
                 free: float = 0.5, near_degrees: float = 30.0, seed: int = 0) -> Articulation:
    """The articulation with each blocked prismatic joint turned along its guide (module docstring);
    vertices (n, 3), faces (m, 3) in the articulation's frame."""
    from neurok_ros.articulation.urdf import face_labels

    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    per_face = face_labels(faces, articulation.labels)
    joints = []
    for joint in articulation.joints:
        swept = swept_part(vertices, faces, per_face, articulation, joint, seed) if joint.type == "prismatic" else None
        if swept is not None:
            moving_vertices, static_faces, points = swept
            sweep = Sweep(vertices, static_faces, points, vertices[moving_vertices], joint, diagonal)
            joint = guided(sweep, blocked, free, near_degrees)
        joints.append(joint)
    articulation.joints = joints
    return articulation


@dataclass
class Sweep:
    """A prismatic joint's moving samples (k, 3) and vertices (p, 3) against the closed rest of the
    object (vertices (n, 3), static_faces (s, 3)); diagonal: the object's bounding-box diagonal."""

    vertices: np.ndarray
    static_faces: np.ndarray
    points: np.ndarray
    part: np.ndarray
    joint: Joint
    diagonal: float

    def travel(self, axis: np.ndarray) -> tuple[float | None, float | None, float]:
        """The stops (lower, upper) along axis (None: free that way) and the part's extent along it."""
        probe = replace(self.joint, axis=axis)
        lower, upper = (swept_stop(self.vertices, self.static_faces, self.points, probe, way, self.diagonal)
                        for way in (-1.0, 1.0))
        return lower, upper, float(np.ptp(self.part @ probe.axis))


def guided(sweep: Sweep, blocked: float, free: float, near_degrees: float) -> Joint:
    """The sweep's joint, turned along its guide when it is blocked (module docstring)."""
    joint = sweep.joint
    lower, upper, extent = sweep.travel(joint.axis)
    if lower is None or upper is None or upper - lower >= blocked * extent:
        return joint
    candidates = np.concatenate([principal_directions(sweep.part), principal_directions(sweep.vertices)])
    for axis in nearest_first(candidates, joint.axis, near_degrees):  # a skewed slide runs into the guide's sides
        low, high, length = sweep.travel(axis)
        if low is None or high is None or high - low >= blocked * length:
            return replace(joint, axis=axis)
    best, best_share = None, free
    for axis in candidates:
        low, high, length = sweep.travel(axis)
        if low is not None and high is not None and length > 0 and (high - low) / length >= best_share:
            best, best_share = (axis, low, high), (high - low) / length
    if best is None:
        return joint
    axis, low, high = best
    return replace(joint, axis=axis, lower=min(low, 0.0), upper=max(high, 0.0))


def nearest_first(directions: np.ndarray, axis: np.ndarray, degrees: float) -> list[np.ndarray]:
    """The directions (k, 3) within `degrees` of axis (3,), signed along it, nearest first."""
    near = [d * np.sign(d @ axis) for d in directions if abs(d @ axis) >= np.cos(np.radians(degrees))]
    return sorted(near, key=lambda d: -abs(d @ axis))
