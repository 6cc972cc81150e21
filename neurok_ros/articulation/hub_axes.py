"""Hubs: a turning part turns about the round piece it bears on.

    joints = hub_axes(vertices, faces, pieces, labels, joints)

A lever turns about its hub, a handle about its rosette, a faucet's cartridge about its cap, a
lamp's arm about its knuckle, a wheel about itself. Where the readout has found such a part but
read its axis from scattered motions, the geometry says it exactly. A revolute joint's **hub** is a
welded piece of its child part that

- is a solid of revolution about one axis (knob_joints.revolution_axis);
- is squat: at most `squat` times as long along that axis as it is across (a knuckle, a disc, a
  cap; not an arm's rod);
- touches the parent part (within `gap` of the diagonal, either way), and bears the whole contact:
  every vertex of the child within `gap` of the parent's surface (or, when none is, every vertex of
  the parent within `gap` of the child's) lies within `slack` times the hub's radius of its axis.

When the child has hubs and they agree (axes within `agree` degrees, lines within `same_line` of the
diagonal apart), the joint turns about the first one's axis through its centre; its limits stay.
Hubs that disagree (a lamp's shade: a knuckle across and a neck along it) leave the joint as it was.
Input and output in the mesh frame and units.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.head_readout import line_distances
from neurok_ros.articulation.knob_joints import nearest_faces, revolution_axis


def hub_axes(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, labels: np.ndarray,
             joints: list[Joint], gap: float = 0.01, squat: float = 1.5, slack: float = 1.1,
             tolerance: float = 0.04, agree: float = 10.0, same_line: float = 0.02) -> list[Joint]:
    """joints with each revolute joint that has agreeing hubs turned about them (module docstring);
    vertices (n, 3), faces (m, 3), pieces (n,) the welded piece of each vertex, labels (n,) parts."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    face_labels, face_pieces = labels[faces[:, 0]], pieces[faces[:, 0]]
    out = []
    for joint in joints:
        hubs = child_hubs(vertices, faces, face_labels, face_pieces, joint, gap * diagonal, squat, slack,
                          tolerance) if joint.type == "revolute" else []
        if hubs and any(bears for *_, bears in hubs) and all(
                abs(axis @ hubs[0][0]) >= np.cos(np.radians(agree))
                and line_distances(centre[None], hubs[0][1], hubs[0][0])[0] <= same_line * diagonal
                for axis, centre, _ in hubs[1:]):
            axis, centre, _ = hubs[0]
            sign = np.sign(axis @ joint.axis) or 1.0
            joint = replace(joint, axis=sign * axis, origin=centre)
        out.append(joint)
    return out


def child_hubs(vertices: np.ndarray, faces: np.ndarray, face_labels: np.ndarray, face_pieces: np.ndarray,
               joint: Joint, gap: float, squat: float, slack: float, tolerance: float) -> list:
    """[(axis (3,), centre (3,), bears)] of the squat solids of revolution of a revolute joint's child
    part that touch its parent; bears: whether it bears the whole contact (module docstring)."""
    child_faces, parent_faces = face_labels == joint.child, face_labels == joint.parent
    if not child_faces.any() or not parent_faces.any():
        return []
    child, parent = np.unique(faces[child_faces]), np.unique(faces[parent_faces])
    on_parent = nearest_faces(vertices[child], vertices, faces[parent_faces], gap) >= 0
    on_child = nearest_faces(vertices[parent], vertices, faces[child_faces], gap)
    contact = vertices[child[on_parent]] if on_parent.any() else vertices[parent[on_child >= 0]]
    if not len(contact):
        return []
    touched = set(face_pieces[child_faces][on_child[on_child >= 0]].tolist())
    hubs = []
    for piece in np.unique(face_pieces[child_faces]):
        own_faces = faces[child_faces & (face_pieces == piece)]
        bearing = piece in touched or on_parent[np.isin(child, own_faces)].any()
        found = revolution_axis(vertices, own_faces, tolerance) if bearing else None
        if found is None:
            continue
        axis, centre, radius = found
        length = float(np.ptp((vertices[np.unique(own_faces)] - centre) @ axis))
        if length <= squat * 2 * radius:
            hubs.append((axis, centre, line_distances(contact, centre, axis).max() <= slack * radius))
    return hubs
