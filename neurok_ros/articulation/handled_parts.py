"""Handled parts: the piece a pull handle is mounted on moves, a box as a drawer, a slab as a door.

    labels, joints = handled_parts(vertices, faces, pieces, labels, joints)

On CAD furniture (LIBERO's cabinets) a drawer box sits on its shelves with no clearance, the
learned motions move the shelves as much as the drawers, and the head calls both still about as
often as not. What tells a drawer from a shelf is what a person reaches for: the handle.

A **handle** is a connected group of small welded pieces (each at most `small` of the object's
area and `size` of its diagonal across) that touch one another (within `gap` of the diagonal, either
way round: CAD handles float a little, LIBERO's posts 1.2 % of the diagonal off their drawer) and,
of the other pieces, exactly one: its **bearer**, at least `broader` times its area and less than
half of the object's (not the body a mug's handle is on). The handle sits on one flat face of the
bearer (the faces it touches turn less than `flat` degrees from their mean normal n, which points
to the handle) and stands at least `standoff` of the diagonal proud of it (a pull a hand closes
around; a label or an inlay does not). A handle whose largest piece is round about an axis within
30 degrees of n is a knob, a dial or a spindle, and no pull (knob_joints reads those).

A bearer that a moving part holds whole (`whole` of its vertices) is left to it. Otherwise the
handle's joint is read as below. Where the part that holds most of the bearer already has that
joint (its type, its axis within `agree` degrees) and lies mostly in the bearer and its handles,
they join that part (a door the readout cut in two keeps the readout's hinge), its limits widened
to span the pull's (a drawer the learned motions move 2 cm still pulls out to its depth); else they
become a part of their own, hung from the root, with the handle's joint (two drawers the readout
read as one part come apart):

- **a drawer** when it is deep along n (at least `deep` times its narrower side across n): a slide
  along n, from the input pose out to its own depth;
- **a door** when it is a slab: a hinge along the edge of the face the handle is farthest from,
  measured in half-widths of the face (a tall narrow door hinges on its far long side, not at its
  top), the leaf opening towards n, up to a right angle; a handle within 0.3 half-widths of the
  middle of the face says nothing of the side.

The parts this empties are dropped (lever_handles.without_empty_parts). Input and output in the
mesh frame and units.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.knob_joints import nearest_faces, revolution_axis, touched
from neurok_ros.articulation.lever_handles import without_empty_parts
from neurok_ros.geometry.mesh_cleaning import face_double_areas


def handled_parts(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, labels: np.ndarray,
                  joints: list[Joint], small: float = 0.02, size: float = 0.3, gap: float = 0.015,
                  broader: float = 4.0, flat: float = 10.0, standoff: float = 0.01, deep: float = 0.3,
                  whole: float = 0.85, agree: float = 20.0) -> tuple[np.ndarray, list[Joint]]:
    """labels (n,) and joints with each handled bearer made a part (module docstring); vertices (n, 3),
    faces (m, 3), pieces (n,) the welded piece of each vertex, labels (n,) parts, joints parents first."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    face_pieces = pieces[faces[:, 0]]
    areas = np.bincount(face_pieces, weights=face_double_areas(vertices, faces) / 2, minlength=int(pieces.max()) + 1)
    found = {}  # bearer -> [handle pieces]
    for members, bearer in handles(vertices, faces, face_pieces, areas, small, size * diagonal, gap * diagonal,
                                   broader):
        found.setdefault(bearer, []).extend(members)
    labels, joints = labels.copy(), list(joints)
    added = False
    for bearer, members in found.items():
        own, handle = pieces == bearer, np.isin(pieces, members)
        held = np.bincount(labels[own], minlength=int(labels.max()) + 1)
        holder = int(held.argmax())
        if holder != 0 and held.max() >= whole * own.sum():
            continue  # a moving part holds it: the readout's joint stands
        joint = bearer_joint(vertices, faces, face_pieces, areas, bearer, members, gap * diagonal, flat,
                             standoff * diagonal, deep)
        if joint is None:
            continue
        if holder != 0 and agrees(joint, joints, holder, agree) and (own | handle)[labels == holder].mean() >= 0.5:
            labels[own | handle] = holder  # the readout's joint, its part made whole, its reach the pull's
            joints = [widened(j, joint) if j.child == holder else j for j in joints]
            added = True
            continue
        part = int(labels.max()) + 1
        labels[own | handle] = part
        joints.append(Joint(f"joint_{part}", *joint, 0, part, 0.5))
        added = True
    return without_empty_parts(labels, joints) if added else (labels, joints)


def widened(joint: Joint, pulled: tuple) -> Joint:
    """`joint` with its limits spanning those of the pull's joint (type, axis, origin, lower, upper) too,
    in its own axis's sense: a drawer the learned motions move 2 cm still pulls out to its depth."""
    sense = 1.0 if joint.axis @ pulled[1] >= 0 else -1.0
    reach = sorted((sense * pulled[3], sense * pulled[4]))
    return replace(joint, lower=min(joint.lower, reach[0]), upper=max(joint.upper, reach[1]))


def agrees(joint: tuple, joints: list[Joint], part: int, degrees: float) -> bool:
    """Whether the joint of `part` has the type of `joint` (type, axis, ...) and its axis within `degrees`."""
    own = next((j for j in joints if j.child == part), None)
    return own is not None and own.type == joint[0] and abs(own.axis @ joint[1]) >= np.cos(np.radians(degrees))


def handles(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, areas: np.ndarray, small: float,
            size: float, gap: float, broader: float, body: float = 0.5) -> list[tuple[list[int], int]]:
    """[(handle pieces, bearer piece)]: connected groups of small pieces that touch exactly one other
    piece, broader than the group and less than `body` of the object's area (not the body a mug's
    handle is on) (module docstring; size and gap in mesh units)."""
    from scipy.sparse.csgraph import connected_components

    total = areas.sum()
    ids = [int(p) for p in np.flatnonzero(areas > 0)]
    little = [p for p in ids if areas[p] <= small * total
              and np.ptp(vertices[np.unique(faces[face_pieces == p])], axis=0).max() <= size]
    if not little or len(little) == len(ids):
        return []
    touches = {p: set(touched(vertices, faces, face_pieces, p, gap)) for p in little}
    index = {p: i for i, p in enumerate(little)}
    links = np.zeros((len(little), len(little)), dtype=bool)
    for p in little:
        for q in touches[p] & set(index):  # either way round: a bar's ends may stop short of its posts
            links[index[p], index[q]] = links[index[q], index[p]] = True
    _, group = connected_components(links, directed=False)
    out = []
    for g in np.unique(group):
        members = [p for p in little if group[index[p]] == g]
        bearers = set().union(*(touches[p] for p in members)) - set(members)
        if len(bearers) != 1:
            continue
        bearer = bearers.pop()
        if broader * areas[members].sum() <= areas[bearer] < body * total:
            out.append((members, bearer))
    return out


def bearer_joint(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, areas: np.ndarray, bearer: int,
                 members: list[int], gap: float, flat: float, standoff: float, deep: float, knob: float = 30.0,
                 centred: float = 0.3) -> tuple | None:
    """(type, axis, origin, lower, upper) of a bearer piece moved by its handle pieces (areas (P,) per
    piece; module docstring; gap and standoff in mesh units), None when the handle is not proud of
    one flat face."""
    handle = vertices[np.unique(faces[np.isin(face_pieces, members)])]
    bearer_faces = faces[face_pieces == bearer]
    hits = nearest_faces(handle, vertices, bearer_faces, gap)
    if not (hits >= 0).any():
        return None
    touched = bearer_faces[np.unique(hits[hits >= 0])]
    corners = vertices[touched]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    if lengths.sum() == 0:
        return None
    normal = normals.sum(0) if np.linalg.norm(normals.sum(0)) > 0 else normals[np.argmax(lengths)]
    normal = normal / np.linalg.norm(normal)
    unit = normals[lengths > 0] / lengths[lengths > 0, None]
    if np.min(np.abs(unit @ normal)) < np.cos(np.radians(flat)):
        return None  # the handle spans an edge or sits on a curved face
    contact = corners.reshape(-1, 3).mean(0)
    grip = handle.mean(0)
    if (grip - contact) @ normal < 0:
        normal = -normal
    if ((handle - contact) @ normal).max() < standoff:
        return None
    largest = max(members, key=lambda m: areas[m])
    found = revolution_axis(vertices, faces[face_pieces == largest], 0.04)
    if found is not None and abs(found[0] @ normal) >= np.cos(np.radians(knob)):
        return None  # a knob, a dial or a spindle turns on its own axis
    body = vertices[np.unique(bearer_faces)]
    centre = body.mean(0)
    heights = (body - centre) @ normal
    across = (body - centre) - np.outer(heights, normal)
    directions = np.linalg.svd(across, full_matrices=False)[2][:2]
    halves = [np.ptp(across @ d) / 2 for d in directions]
    depth = float(np.ptp(heights))
    if depth >= deep * 2 * min(halves):
        return "prismatic", normal, centre, 0.0, depth
    off_centre = [(grip - centre) @ d / max(h, 1e-12) for d, h in zip(directions, halves)]
    edge = int(np.argmax(np.abs(off_centre)))
    if abs(off_centre[edge]) < centred:
        return None  # a handle in the middle of a slab says nothing of its hinge side
    origin = centre - np.sign(off_centre[edge]) * halves[edge] * directions[edge]
    axis = directions[1 - edge]
    if np.cross(axis, grip - origin) @ normal < 0:
        axis = -axis
    return "revolute", axis, origin, 0.0, np.pi / 2
