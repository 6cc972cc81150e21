"""Knobs, dials and wheels: small solids of revolution that turn about their own axis.

    labels, joints = knob_joints(vertices, faces, pieces, labels, joints)

Neither the learned motions nor the articulation head see them well: an oven's knobs move too
little in the learned motions to segment and the head votes them still, and a dial the head does
find gets an axis across it. Their geometry says what they are. A welded piece is a **solid of
revolution** about one of its principal directions when its vertices, turned by a few unrelated
angles about that line through its centroid, stay on its own surface (within `tolerance` of its
radius: a 16-sided knob passes, a square button or a box does not; a ball, symmetric about every
line, has no axis and is left alone). Such a piece is a **knob** when

- it is small: at most `size` of the object's bounding-box diagonal across, and lies on a part that
  has at least four times its area (not the object's body itself);
- it is mounted along its axis: it touches the rest of the object (within `contact_share` of its
  radius) only near its axis (within `mount` of its radius) and at one end, on something broader
  than itself (`broader` times its radius from the axis): a knob's back on its panel, a wheel's hub
  on its axle. A cylinder lying on its side, a washer between two parts, or a deck plate under its
  column is not a knob.

A knob on the base becomes a part of its own with a revolute joint about its axis through its
centroid, limits ±π; the smaller pieces that touch only the knob (its pointer fin) go with it. (A
dial that a readout found but turns about another axis is set right by hub_axes.) Input and output
in the mesh frame and units.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.head_readout import line_distances
from neurok_ros.geometry.mesh_cleaning import face_double_areas

TURNS = np.radians([37.0, 71.0, 143.0])


def revolution_axis(vertices: np.ndarray, faces: np.ndarray, tolerance: float) -> tuple | None:
    """(axis (3,), centre (3,), radius) of a piece (vertices (n, 3), its faces (m, 3)) that is a solid
    of revolution about exactly one principal direction through its area centroid; None otherwise."""
    import igl
    from scipy.spatial.transform import Rotation

    areas = face_double_areas(vertices, faces)
    if len(faces) < 8 or areas.sum() <= 0:
        return None
    centroids = vertices[faces].mean(1)
    centre = (areas[:, None] * centroids).sum(0) / areas.sum()
    centred = centroids - centre
    _, directions = np.linalg.eigh((areas[:, None] * centred).T @ centred)
    used = vertices[np.unique(faces)]
    V, F = np.ascontiguousarray(vertices, dtype=np.float64), np.ascontiguousarray(faces, dtype=np.int64)
    found = []
    for axis in directions.T:
        radius = float(line_distances(used, centre, axis).max())
        if radius <= 0:
            continue
        turned = np.concatenate([(used - centre) @ Rotation.from_rotvec(angle * axis).as_matrix().T + centre
                                 for angle in TURNS])
        distances = np.sqrt(igl.point_mesh_squared_distance(turned, V, F)[0])
        if np.sqrt(np.mean(distances ** 2)) <= tolerance * radius:
            found.append((axis, centre, radius))
    return found[0] if len(found) == 1 else None


def mounted(piece: np.ndarray, axis: np.ndarray, centre: np.ndarray, radius: float, contact: np.ndarray,
            mount: float) -> bool:
    """Whether the contact vertices (M, 3) of a piece (its vertices (n, 3)) with the rest of the
    object lie near its axis (within mount * radius) and at one end of it."""
    if not len(contact) or line_distances(contact, centre, axis).max() > mount * radius:
        return False
    heights, span = (contact - centre) @ axis, (piece - centre) @ axis
    return one_side(heights, 0.5 * (span.min() + span.max()))


def one_side(heights: np.ndarray, middle: float) -> bool:
    """Whether all heights (k,) along an axis lie on one side of `middle` (at one end of a piece)."""
    return bool(np.all(heights <= middle) or np.all(heights >= middle))


def knob_joints(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, labels: np.ndarray,
                joints: list[Joint], size: float = 0.25, gap: float = 0.01, mount: float = 0.7,
                tolerance: float = 0.04, contact_share: float = 0.1,
                broader: float = 1.5) -> tuple[np.ndarray, list[Joint]]:
    """labels (n,) and joints with the knobs added (module docstring); vertices
    (n, 3), faces (m, 3), pieces (n,) the welded piece of each vertex."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    gap = gap * diagonal
    face_pieces = pieces[faces[:, 0]]
    areas = face_double_areas(vertices, faces)
    labels, joints = labels.copy(), list(joints)
    for piece in np.unique(face_pieces):
        own_faces = faces[face_pieces == piece]
        own = vertices[np.unique(own_faces)]
        part = int(np.bincount(labels[np.unique(own_faces)]).argmax())
        if np.ptp(own, axis=0).max() > size * diagonal:
            continue
        found = revolution_axis(vertices, own_faces, tolerance)
        if found is None:
            continue
        axis, centre, radius = found
        others = face_pieces != piece
        hits = nearest_faces(own, vertices, faces[others], gap)
        touched = np.unique(face_pieces[others][hits[hits >= 0]])
        fins = [int(p) for p in touched if areas[face_pieces == p].sum() < areas[face_pieces == piece].sum()
                and not (nearest_faces(vertices[np.unique(faces[face_pieces == p])], vertices,
                                       faces[others & (face_pieces != p)], gap) >= 0).any()]
        body = others & ~np.isin(face_pieces, fins)
        touch = min(gap, contact_share * radius)
        hits = nearest_faces(own, vertices, faces[body], touch) if body.any() else np.full(len(own), -1)
        if not mounted(own, axis, centre, radius, own[hits >= 0], mount):
            continue
        partner = np.unique(faces[body & np.isin(face_pieces, face_pieces[body][hits[hits >= 0]])])
        if line_distances(vertices[partner], centre, axis).max() < broader * radius:
            continue  # what it touches is narrower than it: a deck plate under its column
        knob, knob_faces = np.isin(pieces, [piece, *fins]), np.isin(face_pieces, [piece, *fins])
        base_faces = (labels[faces[:, 0]] == 0) & ~knob_faces
        if part == 0 and areas[base_faces].sum() > 4 * areas[knob_faces].sum():
            child = int(labels.max()) + 1
            labels[knob & (labels == 0)] = child
            joints.append(Joint(f"joint_{child}", "revolute", axis, centre, -np.pi, np.pi, 0, child, 0.5))
    return labels, joints


def nearest_faces(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray, gap: float) -> np.ndarray:
    """(M,) int64 index into faces (m, 3) of the face nearest each point (M, 3), -1 beyond gap."""
    import igl

    if not len(points) or not len(faces):
        return np.full(len(points), -1, dtype=np.int64)
    squared, nearest, _ = igl.point_mesh_squared_distance(np.ascontiguousarray(points), vertices,
                                                          np.ascontiguousarray(faces, dtype=np.int64))
    return np.where(squared <= gap * gap, nearest, -1).astype(np.int64)
