"""Hinge lines where the moving part meets its parent (a lid's hinge at its lower edge).

A readout gets a revolute joint's direction right more often than its line: the articulation head's
offset votes average over a door or a lid and put the line through its middle. A hinge, though,
lies where the part meets the part it turns on. For each revolute joint, the child part's surface
samples within `gap` of the parent's surface are its contact with the parent; seen along the axis
(projected onto the plane normal to it), the line moves to the contact sample nearest it, keeping
its direction. A joint whose child does not touch its parent keeps its line. Where the contact is
the whole cross-section (a door flush in its frame, a knob on its disc) the nearest contact sample
is next to the line already, and it barely moves.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.articulation.articulation import Articulation, Joint

SAMPLES = 2048


def contact_samples(vertices: np.ndarray, faces: np.ndarray, per_face: np.ndarray, child: int, parent: int,
                    gap: float, rng: np.random.Generator) -> np.ndarray:
    """(M, 3) surface samples of part `child` within `gap` of part `parent`'s faces (per_face: (m,)
    part of each face); empty when either part has no faces."""
    import igl

    from neurok_ros.geometry.surface_sampling import sample_surface

    own, other = faces[per_face == child], faces[per_face == parent]
    if not len(own) or not len(other):
        return np.zeros((0, 3))
    points = np.concatenate([sample_surface(vertices, own, SAMPLES, rng).points, vertices[np.unique(own)]])
    squared = igl.point_mesh_squared_distance(np.ascontiguousarray(points), vertices,
                                              np.ascontiguousarray(other, dtype=np.int64))[0]
    return points[squared <= gap * gap]


def placed(joint: Joint, contact: np.ndarray) -> Joint:
    """The revolute joint with its line moved, along the axis's normal plane, to the contact sample
    nearest it (contact (M, 3)); unchanged without contact."""
    if joint.type != "revolute" or not len(contact):
        return joint
    offset = contact - joint.origin
    across = offset - np.outer(offset @ joint.axis, joint.axis)
    nearest = across[int(np.argmin(np.linalg.norm(across, axis=1)))]
    return Joint(joint.name, joint.type, joint.axis, joint.origin + nearest, joint.lower, joint.upper,
                 joint.parent, joint.child, joint.confidence)


def place_pivots(vertices: np.ndarray, faces: np.ndarray, articulation: Articulation, gap: float,
                 seed: int = 0) -> Articulation:
    """The articulation with every revolute joint's line moved onto its child's contact with its
    parent (module docstring); vertices (n, 3), faces (m, 3) in the articulation's frame, gap in
    its units. Joints are replaced in place and the articulation returned."""
    from neurok_ros.articulation.urdf import face_labels

    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    per_face = face_labels(faces, articulation.labels)
    rng = np.random.default_rng(seed)
    articulation.joints = [placed(joint, contact_samples(vertices, faces, per_face, joint.child, joint.parent,
                                                         gap, rng)) if joint.type == "revolute" else joint
                           for joint in articulation.joints]
    return articulation
