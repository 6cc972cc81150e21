"""Parts and joints from the articulation head's per-point predictions (model/articulation_head.py),
pooled over the welded pieces of a mesh of several (a piece is one rigid body).

    labels, votes = piece_parts(points, probabilities, axes, offsets, pieces, touching, glued)
      points (N, 3) normalised frame; probabilities (N, 3) of none / revolute / prismatic; axes,
      offsets (N, 3); pieces (N,) the welded piece of each point; touching, glued (P, P) bool from
      piece_gaps
      -> labels (N,) int64 (0 the base, g the g-th vote's child part) and one JointVote
         (type, axis, origin, confidence; normalised frame) per child part

Every moving point votes for one joint: its type, its axis and, for a revolute joint, the axis line
through point + offset. A single-surface mesh gets no head readout: its parts come from the learned
motions alone (readout.py), because the point votes cut soft bodies into spurious parts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TYPES = {1: "revolute", 2: "prismatic"}


@dataclass
class JointVote:
    """type, axis (3,) unit, origin (3,) on the axis (normalised frame), confidence in [0, 1]."""

    type: str
    axis: np.ndarray
    origin: np.ndarray
    confidence: float


def line_distances(points: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """(M,) distances of points (M, 3) from the line through origin along the unit axis."""
    offset = points - origin
    return np.linalg.norm(offset - np.outer(offset @ axis, axis), axis=1)


def principal_directions(points: np.ndarray) -> np.ndarray:
    """(3, 3) rows: the principal directions of points (M, 3)."""
    if len(points) < 3:
        return np.eye(3)
    return np.linalg.svd(points - points.mean(0), full_matrices=False)[2]


def refit(axes: np.ndarray, line_points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One axis (principal direction of the sign-free votes) and origin (mean line point) for votes."""
    _, vectors = np.linalg.eigh(axes.T @ axes)
    return vectors[:, -1], line_points.mean(0)


def piece_gaps(vertices: np.ndarray, faces: np.ndarray, face_pieces: np.ndarray, points: np.ndarray,
               pieces: np.ndarray) -> np.ndarray:
    """(P, P) float, symmetric, 0 on the diagonal: the gap between each two welded pieces (ids
    0..P-1), the least distance from one piece's sample points (M, 3) with pieces (M,) to the other's
    faces (vertices (n, 3), faces (m, 3) with face_pieces (m,)), exact however sparse the samples;
    inf for pieces with no samples or faces to measure; 0 where a sample lies inside a closed piece
    (a handle's post sunk into its door, a tube into a blade). `gaps < d`: the pieces within d."""
    import igl

    from neurok_ros.geometry.occupancy import is_closed_surface, winding_inside

    count = int(max(face_pieces.max(), pieces.max())) + 1
    gaps = np.full((count, count), np.inf)
    np.fill_diagonal(gaps, 0.0)
    V = np.ascontiguousarray(vertices, dtype=np.float64)
    for piece in range(count):
        own = faces[face_pieces == piece]
        others = pieces != piece
        if not len(own) or not others.any():
            continue
        distances = np.sqrt(igl.point_mesh_squared_distance(np.ascontiguousarray(points[others]), V,
                                                            np.ascontiguousarray(own, dtype=np.int64))[0])
        if is_closed_surface(own):
            distances[winding_inside(V, own, points[others])] = 0.0
        least = np.full(count, np.inf)
        np.minimum.at(least, pieces[others], distances)
        gaps[piece] = np.minimum(gaps[piece], least)
        gaps[:, piece] = np.minimum(gaps[:, piece], least)
    return gaps


def loose_assemblies(counts: np.ndarray, glued: np.ndarray, still: list[int], moving: list[int]) -> list[list[int]]:
    """The glued assemblies (pieces linked by `glued` (P, P) bool; counts (P,) samples per piece) that
    hold a moving piece and are not glued to the base's largest still piece, as lists of piece ids.
    Such an assembly touches the rest only across a clearance: one rigid body, a drawer whose panels
    the votes call still while its handle slides."""
    from scipy.sparse.csgraph import connected_components

    if not still or not moving:
        return []
    _, component = connected_components(glued, directed=False)
    anchor = component[max(still, key=lambda p: counts[p])]
    return [[int(p) for p in np.flatnonzero(component == c) if counts[p] > 0]
            for c in sorted(set(component[moving]) - {anchor})]


def piece_parts(points: np.ndarray, probabilities: np.ndarray, axes: np.ndarray, offsets: np.ndarray,
                pieces: np.ndarray, touching: np.ndarray, glued: np.ndarray, hinged: np.ndarray | None = None,
                angle: float = 20.0, line_gap: float = 0.06) -> tuple[np.ndarray, list[JointVote]]:
    """Parts from the head's votes pooled over welded pieces (pieces (N,) ids 0..P-1; touching (P, P)
    bool: piece_gaps below the adjacency gap; glued (P, P): below about 1e-4). A piece moves when its
    samples' mean probability of "none" is below one half; its joint type is the likelier of the
    two, its axis the principal direction of its samples' axes, its line point their mean point +
    offset. Moving pieces in contact (`hinged` (P, P) bool, default `touching`) that vote for one
    hinge (axes within `angle`, lines within `line_gap`) are one part, and so are glued pieces that
    vote for one slide (a drawer's panels; two drawers or sashes that only touch stay apart). In a
    glued assembly clear of the base (loose_assemblies) the still pieces join its largest moving
    group, and so do the groups that vote for its joint; carried pieces do not vote for the axis. A
    smaller part that touches one moving part only, and no still piece, moves with it when their
    types and axes agree, whatever its line votes: a door's handle. Returns labels (N,) int64 (0 the
    base, g the g-th vote's child part) and one JointVote per child part."""
    ids = np.unique(pieces)
    votes_of = {}
    for piece in ids:
        own = pieces == piece
        mean = probabilities[own].mean(0)
        if mean[0] >= 0.5:
            continue
        kind = 1 if mean[1] >= mean[2] else 2
        axis, origin = refit(axes[own], (points + offsets)[own])
        votes_of[int(piece)] = JointVote(TYPES[kind], axis, origin if kind == 1 else points[own].mean(0),
                                         float(1.0 - mean[0]))
    moving = sorted(votes_of)
    voted = set(moving)
    still = [int(p) for p in ids if int(p) not in votes_of]
    group = {p: p for p in moving}

    def find(p):
        while group[p] != p:
            p = group[p]
        return p

    def same_joint(first, second, lines: bool = True) -> bool:
        if first.type != second.type or abs(first.axis @ second.axis) < np.cos(np.radians(angle)):
            return False
        return (not lines or first.type == "prismatic"
                or line_distances(second.origin[None], first.origin, first.axis)[0] < line_gap)

    hinged = touching if hinged is None else hinged
    for i, a in enumerate(moving):
        for b in moving[i + 1:]:
            contact = glued[a, b] if votes_of[a].type == "prismatic" else hinged[a, b]
            if contact and same_joint(votes_of[a], votes_of[b]):
                group[find(b)] = find(a)
    counts = np.bincount(pieces, minlength=len(glued))  # samples per piece
    for assembly in loose_assemblies(counts, glued, still, moving):
        held = {}
        for p in assembly:
            if p in votes_of:
                held[find(p)] = held.get(find(p), 0) + counts[p]
        host = max(held, key=held.get)
        for root in held:
            if root != host and same_joint(votes_of[host], votes_of[root], lines=votes_of[host].type == "revolute"):
                group[root] = host
        for p in assembly:
            if p not in votes_of:
                votes_of[p], group[p] = votes_of[host], host
                moving.append(p)
                still.remove(p)
    moving.sort()
    for a in moving:
        if a != find(a):
            continue
        members = [p for p in moving if find(p) == a]
        if touching[np.ix_(members, still)].any():
            continue
        hosts = {find(b) for b in moving if find(b) != a and touching[members, b].any()}
        if len(hosts) != 1:
            continue
        host = hosts.pop()
        host_size = sum(counts[p] for p in moving if find(p) == host)
        if sum(counts[p] for p in members) < 0.5 * host_size and same_joint(votes_of[a], votes_of[host], lines=False):
            group[a] = host
    labels = np.zeros(len(points), dtype=np.int64)
    votes: list[JointVote] = []
    for root in sorted({find(p) for p in moving}):
        members = [p for p in moving if find(p) == root]
        own = np.isin(pieces, [p for p in members if p in voted])  # carried pieces cast no vote
        weights = np.array([votes_of[int(p)].confidence for p in pieces[own]])  # in the samples' order
        kind = votes_of[root].type
        signs = np.sign(axes[own] @ votes_of[root].axis)[:, None]
        axis, origin = refit(axes[own] * signs * weights[:, None], (points + offsets)[own])
        if kind == "prismatic":
            origin = points[own].mean(0)
        labels[np.isin(pieces, members)] = len(votes) + 1
        votes.append(JointVote(kind, axis, origin, float(weights.mean())))
    return labels, votes
