"""Mirror twins: on a symmetric object, a moving part's mirror image moves the mirrored way.

    labels, joints = mirror_twins(vertices, faces, pieces, labels, joints)

A gripper's two fingers, a cabinet's two doors, a robot's two grippers: the readouts often find one
and miss its twin, or hang the twin's tip on the first finger. Symmetry says what the twin does.
The object is **symmetric** under an isometry x -> c + Q (x - c), c its area centroid, Q the
reflection across the plane normal to one of its principal directions or of the mesh axes, or the
half-turn about one of them (a finger's mesh used again turned over), when the median distance
of its vertices so moved (1,000 of them at most) from its surface is within `tolerance` of the
diagonal; each such isometry is taken in turn. A welded piece's **twin** is the piece of the same
vertex count and principal extents (within `same`) whose centroid lies nearest its moved centroid,
within `reach` of the diagonal (CAD fingers are placed a little off their mirror pose); a piece
may be its own twin.

A joint's child part is **one-sided** when its pieces' twins are other pieces, none is its own
twin, its image lies on its parent or the root (not on another moving part: that twin is read
already), and its parent, less the child and its image, is its own image. It is split between the
two sides: its pieces on the side that holds most of its area stay, and their twins become a new
part, a child of the same parent, with the moved joint (origin and axis moved; a reflected
revolute axis also reversed, so that equal joint values are mirror poses). Exceptions:

- where the root would keep less than `base` times the child's area, the pair is the object (the
  halves of pliers or scissors, a pin all that is left) and keeps its one joint;
- a part hung from its own twin hangs, with its twin, from the part the two touch most (within
  `gap` of the diagonal) that is its own image, where there is one (a robot's fingers on their
  gripper's slide); where the two touch each other, they turn on each other (scissors' blades)
  and are left alone.

Input and output in the mesh frame and units.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.knob_joints import touched
from neurok_ros.articulation.lever_handles import without_empty_parts
from neurok_ros.geometry.mesh_cleaning import face_double_areas


def mirror_twins(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, labels: np.ndarray,
                 joints: list[Joint], tolerance: float = 0.005, same: float = 0.02,
                 reach: float = 0.05, gap: float = 0.005, base: float = 0.25) -> tuple[np.ndarray, list[Joint]]:
    """labels (n,) and joints with each one-sided moving part's twin added (module docstring);
    vertices (n, 3), faces (m, 3), pieces (n,) the welded piece of each vertex, labels (n,) parts,
    joints parents first."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    found = symmetries(vertices, faces, tolerance) if joints else []
    if not found:
        return labels, joints
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    shapes = piece_shapes(vertices, pieces)
    area = np.bincount(pieces[faces[:, 0]], weights=face_double_areas(vertices, faces),
                       minlength=int(pieces.max()) + 1)
    for Q, point in found:
        twin = piece_twins(shapes, Q, point, same, reach * diagonal)
        labels, joints = twin_parts(vertices, faces, pieces, labels, joints, Q, point, twin, shapes, area,
                                    gap * diagonal, base)
    return labels, joints


def twin_parts(vertices, faces, pieces, labels, joints, Q, point, twin: dict, shapes: dict, area: np.ndarray,
               gap: float, base: float) -> tuple:
    """labels and joints with the twins under one symmetry (Q (3, 3), point (3,)) added; shapes: as
    piece_shapes; area (P,) per piece; gap: the contact distance, mesh units; base: the smallest
    share of the child's area the root keeps."""
    count = int(pieces.max()) + 1
    part_of = np.full(count, -1)
    centres = np.zeros((count, 3))
    for p, (_, _, centre) in shapes.items():
        part_of[p] = np.bincount(labels[pieces == p]).argmax()
        centres[p] = centre
    labels, joints, before = labels.copy(), list(joints), len(joints)
    for joint in list(joints):
        child = set(np.flatnonzero(part_of == joint.child).tolist())
        image = {twin.get(p, -1) for p in child}
        union = child | image
        if not child or image == child or any(twin.get(p, -1) in (-1, p) for p in union):
            continue
        parent = set(np.flatnonzero(part_of == joint.parent).tolist()) - union
        if {twin.get(p, -1) for p in parent} != parent:
            continue
        if joint.parent == 0 and sum(area[p] for p in parent) < base * sum(area[p] for p in child):
            continue  # the pair is (nearly) the whole object: the halves of pliers or scissors
        if any(part_of[p] not in (0, joint.parent, joint.child) for p in image - child):
            continue
        axis, origin = Q @ joint.axis, point + Q @ (joint.origin - point)
        here = sum(area[p] * centres[p] for p in child) / sum(area[p] for p in child)
        away = here - point - Q @ (here - point)  # the direction the symmetry reverses
        stay = sorted(p for p in union if (centres[p] - point) @ away > 0)
        moved = sorted(twin[p] for p in stay)
        if sorted(stay + moved) != sorted(union):
            continue
        if not parent and touching(vertices, faces, pieces, stay, moved, gap):
            continue  # hung from a twin it touches: scissors' blades turning on each other
        part = int(labels.max()) + 1
        labels[np.isin(pieces, stay)] = joint.child
        labels[np.isin(pieces, moved)] = part
        part_of[stay], part_of[moved] = joint.child, part
        if not parent:  # it hung from its own twin: both hang from a symmetric part the twin touches
            host = symmetric_host(vertices, faces, pieces, part_of, twin, stay, joint.child, part, gap)
            if host is not None:
                joints[joints.index(joint)] = joint = replace(joint, parent=host)
        flip = joint.type == "revolute" and np.linalg.det(Q) < 0
        joints.append(Joint(f"joint_{part}", joint.type, -axis if flip else axis, origin,
                            joint.lower, joint.upper, joint.parent, part, joint.confidence))
    return without_empty_parts(labels, joints) if len(joints) > before else (labels, joints)


def touching(vertices, faces, pieces, these: list[int], those: list[int], gap: float) -> bool:
    """Whether any of the pieces `these` touches any of `those` (within gap, mesh units)."""
    face_pieces = pieces[faces[:, 0]]
    return any(set(touched(vertices, faces, face_pieces, piece, gap)) & set(those) for piece in these)


def symmetric_host(vertices, faces, pieces, part_of, twin: dict, stay: list[int], child: int, image: int,
                   gap: float) -> int | None:
    """The part, other than the twins (child, image), that the pieces `stay` touch most (within gap,
    mesh units) and that is its own image, or None."""
    face_pieces = pieces[faces[:, 0]]
    contacts = {}
    for piece in stay:
        for other, points in touched(vertices, faces, face_pieces, piece, gap).items():
            part = int(part_of[other])
            members = np.flatnonzero(part_of == part).tolist()
            if part not in (child, image) and {twin.get(q, -1) for q in members} == set(members):
                contacts[part] = contacts.get(part, 0) + len(points)
    return max(contacts, key=contacts.get) if contacts else None


def symmetries(vertices: np.ndarray, faces: np.ndarray, tolerance: float, probes: int = 1000) -> list[tuple]:
    """[(Q (3, 3), point (3,))]: the reflections and half-turns the object is symmetric under
    (module docstring), one per direction and kind, tested on at most `probes` of its vertices."""
    import igl

    areas = face_double_areas(vertices, faces)
    centroids = vertices[faces].mean(1)
    point = (areas[:, None] * centroids).sum(0) / areas.sum()
    centred = centroids - point
    _, directions = np.linalg.eigh((areas[:, None] * centred).T @ centred)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    probe = vertices[::max(1, -(-len(vertices) // probes))]
    seen, candidates = [], []
    for direction in [*directions.T, *np.eye(3)]:
        if any(abs(direction @ other) > np.cos(np.radians(1.0)) for other in seen):
            continue
        seen.append(direction)
        candidates += [np.eye(3) - 2 * np.outer(direction, direction), 2 * np.outer(direction, direction) - np.eye(3)]
    moved = np.concatenate([point + (probe - point) @ Q.T for Q in candidates])  # one distance query for all
    distances = np.sqrt(igl.point_mesh_squared_distance(moved, np.ascontiguousarray(vertices),
                                                        np.ascontiguousarray(faces))[0]).reshape(len(candidates), -1)
    return [(Q, point) for Q, d in zip(candidates, distances) if np.median(d) <= tolerance * diagonal]


def piece_shapes(vertices: np.ndarray, pieces: np.ndarray) -> dict[int, tuple]:
    """{piece: (vertex count, principal extents (3,) as singular values, centroid (3,))}."""
    shapes = {}
    for piece in np.unique(pieces).tolist():
        own = vertices[pieces == piece]
        centre = own.mean(0)
        shapes[piece] = (len(own), np.linalg.svd(own - centre, compute_uv=False), centre)
    return shapes


def piece_twins(shapes: dict, Q: np.ndarray, point: np.ndarray, same: float, reach: float) -> dict[int, int]:
    """{piece: its twin} (module docstring) for the pieces that have one; shapes: as piece_shapes;
    reach in mesh units."""
    by_count = {}
    for piece, (count, _, _) in shapes.items():
        by_count.setdefault(count, []).append(piece)
    twins = {}
    for piece, (count, extents, centre) in shapes.items():
        target = point + Q @ (centre - point)
        scale = same * max(extents.max(), 1e-12)
        alike = [q for q in by_count[count] if np.all(np.abs(shapes[q][1] - extents) <= scale)]
        if alike:
            nearest = min(alike, key=lambda q: np.linalg.norm(shapes[q][2] - target))
            if np.linalg.norm(shapes[nearest][2] - target) <= reach:
                twins[piece] = nearest
    return twins
