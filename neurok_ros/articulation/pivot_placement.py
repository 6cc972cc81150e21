"""Hinge lines where the moving part meets its parent (a lid's hinge at its lower edge).

A readout gets a revolute joint's direction right more often than its line: the articulation head's
offset votes average over a door or a lid and put the line through its middle. A hinge, though,
lies where the part meets the part it turns on. For each revolute joint, the child part's surface
samples within `gap` of the parent's surface are its contact with the parent; seen along the axis
(projected onto the plane normal to it), the line moves to the contact sample nearest it, keeping
its direction. A joint whose child does not touch its parent keeps its line. Where the contact is
the whole cross-section (a door flush in its frame, a knob on its disc) the nearest contact sample
is next to the line already, and it barely moves.

First, a slab child that touches its parent along a narrow strip at more than STRIP_TURN from its
axis turns onto that strip (strip_hinge): a box's flap read about the edge across its hinge.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.articulation.articulation import Articulation, Joint

SAMPLES = 2048
SLAB_RATIO = 0.3
SLAB_TILT = 20.0  # degrees
REACH = 0.03  # of the bounding-box diagonal
MARGIN = 0.015  # of the bounding-box diagonal
STRIP_RATIO = 10.0  # a contact this many times longer than wide is a strip
STRIP_TURN = 30.0  # degrees: a hinge further than this from its strip turns onto it


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


def strip_hinge(joint: Joint, child: np.ndarray, contact: np.ndarray) -> Joint | None:
    """The revolute joint turned onto the strip along which its slab child touches its parent, or
    None where the rule does not apply: a flap read about the edge across its hinge. child (k, 3)
    the child's vertices, contact (M, 3) its contact samples. The strip is at least STRIP_RATIO times
    as long as it is wide, lies in the slab's plane (within SLAB_TILT) and is more than STRIP_TURN
    from the axis; the axis becomes the child's principal direction along the strip (the edge of a
    flap), the line goes through the strip's middle. A closed door touching its frame all round, or
    a lid whose hinge is right already, keeps its joint."""
    from neurok_ros.articulation.head_readout import principal_directions

    if joint.type != "revolute" or len(child) < 3 or len(contact) < 3:
        return None
    directions = principal_directions(child)
    extents = np.ptp((child - child.mean(0)) @ directions.T, axis=0)
    if extents[2] >= SLAB_RATIO * extents[1]:
        return None
    centre = contact.mean(axis=0)
    strip = principal_directions(contact)
    length, width = np.ptp((contact - centre) @ strip[:2].T, axis=0)
    along = strip[0]
    if (width * STRIP_RATIO > length or abs(along @ directions[2]) > np.sin(np.radians(SLAB_TILT))
            or abs(along @ joint.axis) >= np.cos(np.radians(STRIP_TURN))):
        return None
    edge = directions[int(np.argmax(np.abs(directions[:2] @ along)))]
    return replace(joint, axis=edge if edge @ joint.axis >= 0 else -edge, origin=centre)


def slab_end(joint: Joint, child: np.ndarray, parent_vertices: np.ndarray, parent_faces: np.ndarray,
             diagonal: float) -> Joint | None:
    """The revolute joint with its line on the end of a slab child that touches its parent (module
    docstring), or None where the rule does not apply; child (k, 3) the child part's vertices,
    (parent_vertices, parent_faces) the parent's surface, diagonal the object's."""
    import igl

    from neurok_ros.articulation.head_readout import principal_directions

    if joint.type != "revolute" or len(child) < 3 or not len(parent_faces):
        return None
    axis = joint.axis
    if abs(principal_directions(child)[2] @ axis) > np.sin(np.radians(SLAB_TILT)):
        return None  # a disc turning about its own axis, or a slab about a line across it
    first = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
    first /= np.linalg.norm(first)
    plane = np.stack([first, np.cross(axis, first)])  # (2, 3) across the axis
    flat = (child - joint.origin) @ plane.T
    centre = flat.mean(axis=0)
    _, directions = np.linalg.eigh(np.cov((flat - centre).T))  # columns: thin, long
    local = (flat - centre) @ directions
    low, high = local.min(axis=0), local.max(axis=0)
    thickness, width = high - low
    if width <= 0 or thickness >= SLAB_RATIO * width:
        return None
    along = child @ axis
    heights = np.linspace(along.min(), along.max(), 9) - joint.origin @ axis
    ends = []
    for end in (low[1], high[1]):
        point = joint.origin + (centre + directions @ np.array([0.5 * (low[0] + high[0]), end])) @ plane
        line = point + np.outer(heights - (point - joint.origin) @ axis, axis)
        squared = igl.point_mesh_squared_distance(line, np.ascontiguousarray(parent_vertices),
                                                  np.ascontiguousarray(parent_faces, dtype=np.int64))[0]
        ends.append((float(np.sqrt(squared.min())), point))
    (near, point), (far, _) = sorted(ends, key=lambda end: end[0])
    if near > REACH * diagonal or far - near < MARGIN * diagonal:
        return None
    across = point - joint.origin - axis * ((point - joint.origin) @ axis)
    if np.linalg.norm(across) <= 0.5 * thickness:
        return joint
    return replace(joint, origin=joint.origin + across)


def place_pivots(vertices: np.ndarray, faces: np.ndarray, articulation: Articulation, gap: float,
                 seed: int = 0) -> Articulation:
    """The articulation with every revolute joint's line moved onto the touching end of its slab
    child, or else onto its child's contact with its parent (module docstring); vertices (n, 3),
    faces (m, 3) in the articulation's frame, gap in its units. Joints are replaced in place and the
    articulation returned."""
    from neurok_ros.articulation.urdf import face_labels

    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    per_face = face_labels(faces, articulation.labels)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    rng = np.random.default_rng(seed)
    joints = []
    for joint in articulation.joints:
        if joint.type == "revolute":
            child = vertices[np.unique(faces[per_face == joint.child])]
            contact = contact_samples(vertices, faces, per_face, joint.child, joint.parent, gap, rng)
            on_strip = strip_hinge(joint, child, contact)
            if on_strip is not None:
                joints.append(on_strip)
                continue
            on_end = slab_end(joint, child, vertices, faces[per_face == joint.parent], diagonal)
            joint = on_end if on_end is not None else placed(joint, contact)
        joints.append(joint)
    articulation.joints = joints
    return articulation
