"""Lever handles: a handle turns about the rosette it is mounted on, as a part of the surface it sits on.

    labels, joints = lever_handles(vertices, faces, pieces, labels, joints)

A door's lever handle is a round rosette flat on the leaf with an arm that leaves it sideways.
Neither readout sees it well: the learned motions carry it with the leaf, and the head splits the
two sides of the leaf into parts of their own hung from the frame. The geometry says what it is. A
welded piece is a **rosette** when it

- is small (at most `size` of the object's diagonal across), a solid of revolution
  (knob_joints.revolution_axis) and squat (at most `squat` times as long along its axis as across);
- sits at one end of its axis on a **surface**: a piece broader than itself (reaching `broader`
  times its radius from its axis near the contact), its whole contact with it (within
  `contact_share` of its radius) within `slack` radii of the axis (knob_joints.mounted);
- carries **arms**: pieces that touch it, reach beyond `reach` times its radius from its axis, and
  touch nothing else outside its footprint (within `slack` radii of its axis). A bar between two
  posts touches the second post away from the first; a knob's pointer fin does not reach out.
  Where the rosette alone joins the pieces it touches (a faucet's cartridge cap between the body
  and the lever, neither touching anything else), the largest of them is the surface when it is
  on the root part (a lamp's knuckle between its arm and its shade is no handle).

A rosette and its arms are a handle. Handles whose axes lie on one line and whose surfaces are one
part (the two sides of a door) are one handle. Each handle becomes a part of its own, a child of its
surface's part, with a revolute joint about the first rosette's axis through its centre and limits
±`swing`, unless it lies in a moving part that holds more than it (a lamp's knuckle in its shade:
that part already turns); stray vertices of other pieces in a part it takes (a lever the learned
motions cut, its cuts reaching into the body) go to its surface's part, and the parts it empties
are dropped (their joints with them, their children hung from their
parents). Input and output in the mesh frame and units.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.head_readout import line_distances
from neurok_ros.articulation.knob_joints import mounted, nearest_faces, revolution_axis
from neurok_ros.geometry.mesh_cleaning import face_double_areas


def lever_handles(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, labels: np.ndarray,
                  joints: list[Joint], size: float = 0.25, gap: float = 0.01, squat: float = 1.5,
                  slack: float = 1.1, reach: float = 2.0, broader: float = 1.5, tolerance: float = 0.04,
                  contact_share: float = 0.1, agree: float = 10.0, same_line: float = 0.02,
                  swing: float = np.pi / 4) -> tuple[np.ndarray, list[Joint]]:
    """labels (n,) and joints with each handle made a part (module docstring); vertices (n, 3),
    faces (m, 3), pieces (n,) the welded piece of each vertex, labels (n,) parts, joints parents first."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    face_pieces = pieces[faces[:, 0]]
    handles = []  # [(axis, centre, pieces of the handle, part of the surface)]
    for piece in np.unique(face_pieces):
        found = handle(vertices, faces, face_pieces, labels, piece, size * diagonal, gap * diagonal, squat,
                       slack, reach, broader, tolerance, contact_share)
        if found is None:
            continue
        axis, centre, members, surface = found
        same = next((h for h in handles if h[3] == surface and abs(h[0] @ axis) >= np.cos(np.radians(agree))
                     and line_distances(centre[None], h[1], h[0])[0] <= same_line * diagonal), None)
        if same is None:
            handles.append((axis, centre, set(members), surface))
        else:
            same[2].update(members)
    labels, joints = labels.copy(), list(joints)
    handles = [h for h in handles if carvable(labels, pieces, sorted(h[2]), h[3])]
    for axis, centre, members, surface in handles:
        part = int(labels.max()) + 1
        inside = np.isin(pieces, sorted(members))
        for cut in np.setdiff1d(labels[inside], [0, surface]):
            labels[(labels == cut) & ~inside] = surface  # what the handle leaves of a part it holds most of
        labels[inside] = part
        joints.append(Joint(f"joint_{part}", "revolute", axis, centre, -swing, swing, surface, part, 0.5))
    return without_empty_parts(labels, joints) if handles else (labels, joints)


def handle(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, labels: np.ndarray, piece: int,
           size: float, gap: float, squat: float, slack: float, reach: float, broader: float,
           tolerance: float, contact_share: float) -> tuple | None:
    """(axis (3,), centre (3,), [pieces of the handle], part of its surface) when `piece` is a rosette
    with arms (module docstring; size and gap in mesh units), else None."""
    own_faces = faces[face_pieces == piece]
    own_vertices = np.unique(own_faces)
    own = vertices[own_vertices]
    if np.ptp(own, axis=0).max() > size:
        return None
    found = revolution_axis(vertices, own_faces, tolerance)
    if found is None:
        return None
    axis, centre, radius = found
    if np.ptp((own - centre) @ axis) > squat * 2 * radius:
        return None
    others = face_pieces != piece
    hits = nearest_faces(own, vertices, faces[others], gap)
    arms, surfaces, loose = [], [], []
    for other in np.unique(face_pieces[others][hits[hits >= 0]]):
        other_vertices = vertices[np.unique(faces[face_pieces == other])]
        if line_distances(other_vertices, centre, axis).max() <= reach * radius:
            continue  # a fin or a washer: it does not leave the rosette
        rest = (face_pieces != piece) & (face_pieces != other)
        touching = other_vertices[nearest_faces(other_vertices, vertices, faces[rest], gap) >= 0]
        if not len(touching):
            loose.append(int(other))
        elif line_distances(touching, centre, axis).max() <= slack * radius:
            arms.append(int(other))
        else:
            surfaces.append(int(other))
    if not arms and not surfaces and len(loose) > 1:  # only the rosette joins them: the largest is its body
        largest = max(loose, key=lambda other: face_double_areas(vertices, faces[face_pieces == other]).sum())
        if part_of(labels, faces[face_pieces == largest]) == 0:
            arms, loose = [other for other in loose if other != largest], [largest]
    surfaces += loose
    if not arms or not surfaces:
        return None
    body = np.isin(face_pieces, surfaces)
    nearest = nearest_faces(own, vertices, faces[body], min(gap, contact_share * radius))
    if not mounted(own, axis, centre, radius, own[nearest >= 0], slack):
        return None
    near = np.unique(faces[body][nearest[nearest >= 0]])
    if line_distances(vertices[near], centre, axis).max() < broader * radius:
        return None  # what it sits on is no broader than it: a cap on its column
    return axis, centre, [int(piece), *arms], part_of(labels, faces[body])


def part_of(labels: np.ndarray, faces: np.ndarray) -> int:
    """The part most of the vertices of these faces (k, 3) are in."""
    return int(np.bincount(labels[np.unique(faces)]).argmax())


def carvable(labels: np.ndarray, pieces: np.ndarray, handle: list[int], surface: int) -> bool:
    """Whether a handle (its welded pieces; pieces (n,) the piece of each vertex) may become a part:
    each part it takes vertices from is its surface's part, the root, or the handle but for stray
    vertices of pieces that are mostly elsewhere, not a moving part that holds a whole piece more (as
    a lamp's shade holds its knuckle); those stray vertices go to the surface's part."""
    inside = np.isin(pieces, handle)
    for part in np.unique(labels[inside]):
        if part in (0, surface):
            continue
        stray = np.unique(pieces[(labels == part) & ~inside])
        if any(np.all(labels[pieces == piece] == part) for piece in stray):
            return False
    return True


def without_empty_parts(labels: np.ndarray, joints: list[Joint]) -> tuple[np.ndarray, list[Joint]]:
    """labels renumbered 0..P-1 over the parts that keep vertices, and the joints of those parts, a
    child of a dropped part hung from that part's parent; the root (0) is always kept."""
    kept = np.union1d([0], np.unique(labels))
    parent_of = {j.child: j.parent for j in joints}
    renumber = {int(old): new for new, old in enumerate(kept)}

    def surviving(part: int) -> int:
        while part not in renumber:
            part = parent_of.get(part, 0)
        return renumber[part]

    out = [replace(j, name=j.name if renumber[j.child] == j.child else f"joint_{renumber[j.child]}",
                   parent=surviving(j.parent), child=renumber[j.child]) for j in joints if j.child in renumber]
    return np.searchsorted(kept, labels).astype(np.int64), out
