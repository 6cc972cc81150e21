"""Rigid parts from sampled motions: which surface samples move together as one rigid body.

    labels = segment_rigid(rest, moved)   # rest (N, 3), moved (E, N, 3) -> (N,) int64 part per sample

Sequential consensus (the multi-body form of RANSAC): each round fits, for many seed neighbourhoods,
one rigid transform per motion (Kabsch), counts the samples every motion carries to within
`tolerance` (RMS over motions) of where that transform puts them, and takes the largest such set as
a part. Rounds go on until fewer than `min_fraction` of the samples are left; those join the part
that explains them best. Units are those of the points (the normalised frame: longest side 1).
"""
from __future__ import annotations

import numpy as np


def kabsch(rest: np.ndarray, moved: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Best rigid motions rest (M, 3) -> moved (..., M, 3): R (..., 3, 3), t (..., 3) with
    R rest + t ~ moved in the (weighted) least-squares sense."""
    w = np.ones(len(rest)) if weights is None else np.asarray(weights, dtype=np.float64)
    w = w / max(w.sum(), 1e-300)
    rest_centre = w @ rest
    moved_centre = np.einsum("m,...mi->...i", w, moved)
    H = np.einsum("m,mi,...mj->...ij", w, rest - rest_centre, moved - moved_centre[..., None, :])
    u, _, vh = np.linalg.svd(H)
    d = np.sign(np.linalg.det(np.swapaxes(vh, -1, -2) @ np.swapaxes(u, -1, -2)))
    d = np.where(d == 0, 1.0, d)
    D = np.zeros(H.shape)
    D[..., 0, 0], D[..., 1, 1], D[..., 2, 2] = 1.0, 1.0, d
    R = np.swapaxes(vh, -1, -2) @ D @ np.swapaxes(u, -1, -2)
    t = moved_centre - np.einsum("...ij,j->...i", R, rest_centre)
    return R, t


def motion_residual(R: np.ndarray, t: np.ndarray, rest: np.ndarray, moved: np.ndarray) -> np.ndarray:
    """RMS over motions of |R p + t - x| for every point: R (S, E, 3, 3), t (S, E, 3), rest (M, 3),
    moved (E, M, 3) -> (S, M). The square is expanded, |p|^2 + 2 p.R^T t + |t|^2 - 2 x.R p - 2 x.t
    + |x|^2 summed over motions, so the point-motion coupling is two matrix products ((M, 9E) by
    (9E, S) and (M, 3E) by (3E, S)) instead of S E M small products."""
    S, E = R.shape[:2]
    M = len(rest)
    coupling = np.einsum("emj,mi->meji", moved, rest).reshape(M, 9 * E) @ R.reshape(S, 9 * E).T
    along = np.swapaxes(moved, 0, 1).reshape(M, 3 * E) @ t.reshape(S, 3 * E).T
    lever = rest @ np.einsum("seji,sej->si", R, t).T
    square = (E * np.square(rest).sum(1)[:, None] + 2.0 * lever + np.square(t).sum((1, 2))[None]
              - 2.0 * coupling - 2.0 * along + np.square(moved).sum((0, 2))[:, None]) / E
    return np.sqrt(np.maximum(square, 0.0)).T


def segment_rigid(rest: np.ndarray, moved: np.ndarray, tolerance: float = 0.03, min_fraction: float = 0.02,
                  max_parts: int = 10, seeds: int = 96, neighbourhood: int = 24, seed: int = 0) -> np.ndarray:
    """(N,) int64 part of each sample, parts numbered by size (0 the largest); see the module docstring."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(seed)
    N = len(rest)
    labels = np.full(N, -1, dtype=np.int64)
    motions: list[tuple[np.ndarray, np.ndarray]] = []
    while len(motions) < max_parts:
        left = np.flatnonzero(labels < 0)
        if len(left) < max(min_fraction * N, 4):
            break
        tree = cKDTree(rest[left])
        chosen = rng.choice(len(left), size=min(seeds, len(left)), replace=False)
        _, near = tree.query(rest[left[chosen]], k=min(neighbourhood, len(left)))
        near = left[np.atleast_2d(near)]
        best, best_count = None, -1
        for block in range(0, len(near), 16):
            group = near[block:block + 16]
            R = np.empty((len(group), moved.shape[0], 3, 3))
            t = np.empty((len(group), moved.shape[0], 3))
            for s, members in enumerate(group):
                R[s], t[s] = kabsch(rest[members], moved[:, members])
            counts = (motion_residual(R, t, rest[left], moved[:, left]) < tolerance).sum(1)
            s = int(np.argmax(counts))
            if counts[s] > best_count:
                best, best_count = (R[s], t[s]), int(counts[s])
        inliers = left
        for _ in range(3):  # refit on the consensus set, then take the set again
            mask = motion_residual(best[0][None], best[1][None], rest[left], moved[:, left])[0] < tolerance
            if mask.sum() < 3:
                break
            inliers = left[mask]
            best = kabsch(rest[inliers], moved[:, inliers])
        if len(inliers) < max(min_fraction * N, 3):
            break
        labels[inliers] = len(motions)
        motions.append(best)
    if not motions:
        return np.zeros(N, dtype=np.int64)
    left = np.flatnonzero(labels < 0)
    if len(left):
        R = np.stack([m[0] for m in motions])
        t = np.stack([m[1] for m in motions])
        labels[left] = np.argmin(motion_residual(R, t, rest[left], moved[:, left]), axis=0)
    order = np.argsort(-np.bincount(labels, minlength=len(motions)), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[labels]
