"""Serial chains: an object whose large pieces form one chain joined end to end by round contacts.

    found = serial_chain(vertices, faces, pieces)   # (labels, joints) or None

A robot arm's links meet end to end at round flanges, and neither readout moves them: the learned
space has seen no arm, and the head reads the links as one body. Their contacts say where the
joints are. The **links** are the welded pieces of at least `link` of the object's area; two
links touch where vertices of one lie within `gap` of the diagonal of the other. The object is a
serial chain when its links, so joined, form one path of at least `min_links` links, and every
contact along the path is **round**: the contact points, seen along the normal of their best
plane, surround their centre (no angular gap over `open_degrees`). A lamp's arms meet only through
knuckles too small to be links, and a cabinet's panels touch in loops and along edges, so neither
is a chain.

Each contact becomes a revolute joint about the normal of its plane through its centre, the link
nearer the larger end (the base) its parent; limits ±π (contact_limits cuts them where the arm
runs into itself). The smaller pieces join the link they touch most, or the nearest one; a group of
small pieces that touches only the far end link is a last link of its own when its contact with
that link is round (a flange and its tool plate). Input and output in the mesh frame and units.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.knob_joints import touched
from neurok_ros.geometry.mesh_cleaning import face_double_areas


def serial_chain(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, link: float = 0.05,
                 gap: float = 0.005, min_links: int = 5,
                 open_degrees: float = 60.0) -> tuple[np.ndarray, list[Joint]] | None:
    """(labels (n,), joints parents first) when the object is a serial chain (module docstring),
    else None; vertices (n, 3), faces (m, 3), pieces (n,) the welded piece of each vertex."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    gap = gap * float(np.linalg.norm(np.ptp(vertices, axis=0)))
    face_pieces = pieces[faces[:, 0]]
    areas = np.bincount(face_pieces, weights=face_double_areas(vertices, faces) / 2, minlength=int(pieces.max()) + 1)
    links = [int(p) for p in np.flatnonzero(areas >= link * areas.sum())]
    if len(links) < min_links:
        return None
    touch = {p: touched(vertices, faces, face_pieces, p, gap) for p in links}
    path = chain_path(links, {p: {q: c for q, c in touch[p].items() if q in links} for p in links})
    if path is None or len(path) < min_links:
        return None
    touch.update({p: touched(vertices, faces, face_pieces, p, gap) for p in np.flatnonzero(areas > 0).tolist()
                  if p not in touch})  # the smaller pieces, only for a chain
    if areas[path[-1]] > areas[path[0]]:
        path = path[::-1]  # the base is the larger end
    rings = [ring(np.concatenate([touch[a][b], touch[b][a]]), open_degrees) for a, b in zip(path, path[1:])]
    if any(r is None for r in rings):
        return None
    owner = {p: i for i, p in enumerate(path)}
    small = [p for p in touch if p not in owner]
    tool = [p for p in small if set(touch[p]) - set(small) == {path[-1]}]
    if tool:
        contact = np.concatenate([touch[p][path[-1]] for p in tool] + [touch[path[-1]][p] for p in tool
                                                                      if p in touch[path[-1]]])
        last = ring(contact, open_degrees)
        if last is not None:
            rings.append(last)
            owner.update({p: len(path) for p in tool})
    for p in small:
        if p not in owner:
            near = [q for q in touch[p] if q in owner]
            host = max(near, key=lambda q: len(touch[p][q])) if near else nearest_piece(
                vertices, faces, face_pieces, p, list(owner))
            owner[p] = owner[host]
    labels = np.array([owner[int(p)] for p in pieces], dtype=np.int64)
    joints = [Joint(f"joint_{i + 1}", "revolute", axis, centre, -np.pi, np.pi, i, i + 1, 0.5)
              for i, (axis, centre) in enumerate(rings)]
    return labels, joints


def chain_path(links: list[int], touch: dict[int, dict]) -> list[int] | None:
    """The links in order when they form one simple path (two ends of one contact, the rest of two),
    else None."""
    degree = {p: len(touch[p]) for p in links}
    ends = [p for p in links if degree[p] == 1]
    if len(ends) != 2 or any(degree[p] not in (1, 2) for p in links):
        return None
    path, previous = [ends[0]], None
    while len(path) < len(links):
        following = [q for q in touch[path[-1]] if q != previous]
        if len(following) != 1:
            return None
        previous = path[-1]
        path.append(following[0])
    return path if path[-1] == ends[1] else None


def ring(points: np.ndarray, open_degrees: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(axis (3,), centre (3,)) of contact points (k, 3) that surround their centre in their best
    plane (no angular gap over open_degrees), else None."""
    if len(points) < 6:
        return None
    centre = points.mean(0)
    directions = np.linalg.svd(points - centre, full_matrices=False)[2]
    flat = (points - centre) @ directions[:2].T
    angles = np.sort(np.arctan2(flat[:, 1], flat[:, 0]))
    widest = np.diff(np.concatenate([angles, angles[:1] + 2 * np.pi])).max()
    return (directions[2], centre) if np.degrees(widest) <= open_degrees else None


def nearest_piece(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, piece: int,
                  candidates: list[int]) -> int:
    """The candidate piece whose centroid is nearest `piece`'s."""
    centre = vertices[np.unique(faces[face_pieces == piece])].mean(0)
    return min(candidates, key=lambda q: np.linalg.norm(vertices[np.unique(faces[face_pieces == q])].mean(0) - centre))
