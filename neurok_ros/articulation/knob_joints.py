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
dial that a readout found but turns about another axis is set right by hub_axes.)

**Wheels come in sets.** A small solid of revolution that has a twin (another of the same radius
and length within `same`, its axis parallel but not on the same line: wheel_sets) turns about its
axis however it touches the rest (a robot's wheel hung by its rim under a leg, a car's wheel on a
narrower steering knuckle), unless a moving part holds it whole (`whole` of its vertices); the
whole piece becomes the part, also where a readout cut it. A column, a deck plate or a cap comes
alone, and two washers on one pin share a line. Input and output in the mesh frame and units.
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
                broader: float = 1.5, same: float = 0.03, whole: float = 0.85) -> tuple[np.ndarray, list[Joint]]:
    """labels (n,) and joints with the knobs added (module docstring); vertices
    (n, 3), faces (m, 3), pieces (n,) the welded piece of each vertex."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    gap = gap * diagonal
    face_pieces = pieces[faces[:, 0]]
    areas = face_double_areas(vertices, faces)
    labels, joints = labels.copy(), list(joints)
    rounds = {}
    for piece in np.unique(face_pieces):
        own_faces = faces[face_pieces == piece]
        if np.ptp(vertices[np.unique(own_faces)], axis=0).max() <= size * diagonal:
            found = revolution_axis(vertices, own_faces, tolerance)
            if found is not None:
                rounds[int(piece)] = found
    wheels = wheel_sets(vertices, faces, face_pieces, rounds, same)
    for piece, (axis, centre, radius) in rounds.items():
        held = np.bincount(labels[pieces == piece])
        part = int(held.argmax())
        knob = knob_pieces(vertices, faces, face_pieces, areas, piece, axis, centre, radius, gap, mount,
                           contact_share, broader)
        knob_faces = np.isin(face_pieces, knob or [])
        base_faces = (labels[faces[:, 0]] == 0) & ~knob_faces
        if knob is not None and part == 0 and areas[base_faces].sum() > 4 * areas[knob_faces].sum():
            child = int(labels.max()) + 1
            labels[np.isin(pieces, knob) & (labels == 0)] = child
            joints.append(Joint(f"joint_{child}", "revolute", axis, centre, -np.pi, np.pi, 0, child, 0.5))
        elif piece in wheels and (part == 0 or held.max() < whole * held.sum()):
            child = int(labels.max()) + 1  # a wheel no moving part holds whole (one the readout cut)
            labels[pieces == piece] = child
            joints.append(Joint(f"joint_{child}", "revolute", axis, centre, -np.pi, np.pi, 0, child, 0.5))
    return labels, joints


def knob_pieces(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, areas: np.ndarray, piece: int,
                axis: np.ndarray, centre: np.ndarray, radius: float, gap: float, mount: float,
                contact_share: float, broader: float) -> list[int] | None:
    """The pieces of a knob (the round `piece` and its pointer fins) when `piece` is mounted along its
    axis on something broader than itself (module docstring; gap in mesh units), else None."""
    own = vertices[np.unique(faces[face_pieces == piece])]
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
        return None
    partner = np.unique(faces[body & np.isin(face_pieces, face_pieces[body][hits[hits >= 0]])])
    if line_distances(vertices[partner], centre, axis).max() < broader * radius:
        return None  # what it touches is narrower than it: a deck plate under its column
    return [int(piece), *fins]


def wheel_sets(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, rounds: dict,
               same: float, degrees: float = 5.0) -> set[int]:
    """The round pieces ({piece: (axis, centre, radius)}) that have a twin: another of the same radius
    and length along its axis (within `same` of them), the two axes parallel (within `degrees`) but
    not one line. Wheels come in sets; a column, a deck plate or a cap comes alone."""
    extent = {}
    for piece, (axis, centre, radius) in rounds.items():
        own = vertices[np.unique(faces[face_pieces == piece])]
        extent[piece] = (radius, float(np.ptp((own - centre) @ axis)))
    twins = set()
    pieces = sorted(rounds)
    for i, a in enumerate(pieces):
        for b in pieces[i + 1:]:
            (axis_a, centre_a, _), (axis_b, centre_b, _) = rounds[a], rounds[b]
            alike = all(abs(x - y) <= same * max(x, y) for x, y in zip(extent[a], extent[b]))
            parallel = abs(axis_a @ axis_b) >= np.cos(np.radians(degrees))
            if alike and parallel and line_distances(centre_b[None], centre_a, axis_a)[0] > extent[a][0]:
                twins.update((a, b))
    return twins


def nearest_faces(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray, gap: float) -> np.ndarray:
    """(M,) int64 index into faces (m, 3) of the face nearest each point (M, 3), -1 beyond gap."""
    import igl

    if not len(points) or not len(faces):
        return np.full(len(points), -1, dtype=np.int64)
    squared, nearest, _ = igl.point_mesh_squared_distance(np.ascontiguousarray(points), vertices,
                                                          np.ascontiguousarray(faces, dtype=np.int64))
    return np.where(squared <= gap * gap, nearest, -1).astype(np.int64)


def touched(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, piece: int,
            gap: float) -> dict[int, np.ndarray]:
    """{other piece: (k, 3) vertices of `piece` within `gap` (mesh units) of it}."""
    own = vertices[np.unique(faces[face_pieces == piece])]
    others = face_pieces != piece
    hits = nearest_faces(own, vertices, faces[others], gap)
    near = hits >= 0
    other_of = face_pieces[others][hits[near]]
    return {int(q): own[near][other_of == q] for q in np.unique(other_of)}
