"""Parts and joints from the articulation head's per-point predictions (model/articulation_head.py).

    labels, votes = head_parts(points, probabilities, axes, offsets, pieces)
      points (N, 3) normalised frame; probabilities (N, 3) of none / revolute / prismatic; axes,
      offsets (N, 3); pieces (N,) the welded piece of each point
      -> labels (N,) int64 (0 the base, g the g-th vote's child part) and one JointVote
         (type, axis, origin, confidence; normalised frame) per group

Every moving point votes for one joint: its type, its axis and, for a revolute joint, the axis line
through point + offset. Groups are found by consensus, largest first: a seed's vote collects the
points of the same type whose axes lie within `angle` degrees and whose lines pass within `line_gap`
of it; the vote is refitted on them (principal direction of the axes, mean of the line points), and
the connected set of them around the seed (points on one welded piece or within `link_gap` of each
other) is one child part. Points of no group belong to the base.
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


def refit(axes: np.ndarray, line_points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One axis (principal direction of the sign-free votes) and origin (mean line point) for votes."""
    _, vectors = np.linalg.eigh(axes.T @ axes)
    return vectors[:, -1], line_points.mean(0)


def connected_around(points: np.ndarray, pieces: np.ndarray, members: np.ndarray, seed: int,
                     gap: float) -> np.ndarray:
    """The members (sorted indices) connected to `seed` through chains of points on one welded piece
    (pieces (N,)) or within `gap` of each other."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    pairs = cKDTree(points[members]).query_pairs(gap, output_type="ndarray")
    order = np.argsort(pieces[members], kind="stable")
    same_piece = pieces[members][order[1:]] == pieces[members][order[:-1]]
    pairs = np.concatenate([pairs, np.stack([order[1:][same_piece], order[:-1][same_piece]], axis=1)])
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(members),) * 2)
    _, component = connected_components(graph, directed=False)
    return members[component == component[np.searchsorted(members, seed)]]


def head_parts(points: np.ndarray, probabilities: np.ndarray, axes: np.ndarray, offsets: np.ndarray,
               pieces: np.ndarray, min_points: int = 8, angle: float = 15.0, line_gap: float = 0.04,
               link_gap: float = 0.03,
               seeds: int = 64, seed: int = 0) -> tuple[np.ndarray, list[JointVote]]:
    """See the module docstring."""
    rng = np.random.default_rng(seed)
    kinds = np.argmax(probabilities, axis=1)
    confidence = probabilities.max(axis=1)
    line_points = points + offsets
    open_points = kinds > 0
    labels = np.zeros(len(points), dtype=np.int64)
    votes: list[JointVote] = []
    cos_angle = np.cos(np.radians(angle))
    while open_points.sum() >= min_points:
        candidates = np.flatnonzero(open_points)
        best, best_count = None, 0
        for s in rng.choice(candidates, size=min(seeds, len(candidates)), replace=False):
            same = candidates[(kinds[candidates] == kinds[s]) & (np.abs(axes[candidates] @ axes[s]) >= cos_angle)]
            if kinds[s] == 1:
                same = same[line_distances(line_points[same], line_points[s], axes[s]) < line_gap]
            if len(same) > best_count:
                best, best_count = (s, same), len(same)
        s, same = best
        signs = np.sign(axes[same] @ axes[s])[:, None]
        axis, origin = refit(axes[same] * signs, line_points[same])
        same = candidates[(kinds[candidates] == kinds[s]) & (np.abs(axes[candidates] @ axis) >= cos_angle)]
        if kinds[s] == 1:
            same = same[line_distances(line_points[same], origin, axis) < line_gap]
        if s not in same:
            same = np.union1d(same, [s])
        part = connected_around(points, pieces, same, s, link_gap)
        open_points[part] = False
        if len(part) < min_points:
            continue
        signs = np.sign(axes[part] @ axis)[:, None]
        axis, origin = refit(axes[part] * signs, line_points[part])
        if kinds[s] == 2:  # a slide has no line: place it at the part's centre
            origin = points[part].mean(0)
        labels[part] = len(votes) + 1
        votes.append(JointVote(TYPES[int(kinds[s])], axis, origin, float(confidence[part].mean())))
    return labels, votes
