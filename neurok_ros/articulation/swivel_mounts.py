"""Swivel mounts: the round piece a moving part is mounted on turns with it about its own axis.

    labels, joints = swivel_mounts(vertices, faces, pieces, labels, joints)

A faucet's lever lifts about its hub and swings, with the cartridge cap it sits on, about the
column; a turret carries its gun, a lamp's swivel its arm. The readout finds the lever (it moves a
lot) but leaves the cap on the base: the learned motions hardly turn it and the head votes it
still. The geometry says it: a welded piece of the base is a **swivel mount** when

- it is a small solid of revolution (knob_joints.revolution_axis; at most `size` of the object's
  bounding-box diagonal across) and squat (at most `squat` times as long along its axis as across);
- it carries a moving part: the child of a joint on the base touches it (within `gap` of the
  diagonal), and that joint turns or slides across the mount's axis (at least `across` degrees
  from it: a knob on a cap turns about the same line and adds no joint);
- it stands on the rest of the base at one end of its axis and carries the part at the other: every
  contact with the base lies on one side of its middle, every contact with the part on the other.

The mount becomes a part of its own, a child of the base, turning about its axis through its centre
(limits ±π; the collision sweep of contact_limits sets where the carried part runs into the rest),
and the joints it carries are hung from it. Input and output in the mesh frame and units.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.knob_joints import nearest_faces, one_side, revolution_axis


def swivel_mounts(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, labels: np.ndarray,
                  joints: list[Joint], size: float = 0.25, squat: float = 1.5, gap: float = 0.01,
                  across: float = 45.0, tolerance: float = 0.04) -> tuple[np.ndarray, list[Joint]]:
    """labels (n,) and joints with the swivel mounts added (module docstring); vertices (n, 3),
    faces (m, 3), pieces (n,) the welded piece of each vertex, labels (n,) parts, joints parents first."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    gap = gap * diagonal
    labels, joints = labels.copy(), list(joints)
    face_pieces = pieces[faces[:, 0]]
    for piece in np.unique(face_pieces):
        own_faces = faces[face_pieces == piece]
        members = np.unique(own_faces)
        own = vertices[members]
        if np.any(labels[members] != 0) or np.ptp(own, axis=0).max() > size * diagonal:
            continue
        carried = [j for j in joints if j.parent == 0]
        if not carried:
            continue
        found = revolution_axis(vertices, own_faces, tolerance)
        if found is None:
            continue
        axis, centre, radius = found
        heights = (own - centre) @ axis
        if np.ptp(heights) > squat * 2 * radius:
            continue
        middle = 0.5 * (heights.min() + heights.max())
        face_labels = labels[faces[:, 0]]
        rest = nearest_faces(own, vertices, faces[(face_labels == 0) & (face_pieces != piece)], gap) >= 0
        if not rest.any() or not one_side(heights[rest], middle):
            continue
        on_base_side = np.sign(heights[rest].mean() - middle)
        mounted = []
        for joint in carried:
            if abs(joint.axis @ axis) > np.cos(np.radians(across)):
                continue
            touch = nearest_faces(own, vertices, faces[face_labels == joint.child], gap) >= 0
            if touch.any() and one_side(heights[touch], middle) and \
                    np.sign(heights[touch].mean() - middle) == -on_base_side:
                mounted.append(joint)
        if not mounted:
            continue
        part = int(labels.max()) + 1
        labels[members] = part
        mount = Joint(f"joint_{part}", "revolute", axis, centre, -np.pi, np.pi, 0, part, 0.5)
        hung = {id(j) for j in mounted}
        first = min(k for k, j in enumerate(joints) if id(j) in hung)
        joints = [replace(j, parent=part) if id(j) in hung else j for j in joints]
        joints.insert(first, mount)
    return labels, joints

