"""Per-vertex dual quaternions of a non-rigid motion by local Kabsch fits (vectorised numpy).

For vertex i, its neighbourhood N(i) is the vertex and its one-ring (mesh neighbours), or its k
nearest vertices at rest when the ring is degenerate (fewer than two neighbours, or all collinear).
The rotation R_i(t) is the proper rotation (det = +1) that best maps the rest neighbourhood onto
frame t in the least-squares sense. Two anchorings of the translation:
  exact_at_vertex=True (default): rotate about the vertex, t_i = x_i(t) - R_i p_i. The transform is
      the best rigid motion among those that carry the vertex exactly to its frame position, so the
      dual quaternions reproduce every frame at the vertices and R_i carries the local rotation.
  exact_at_vertex=False: classic Kabsch about the neighbourhood centroids (the unconstrained best
      rigid fit; the vertex itself lands only approximately).
Both reproduce a rigidly moved mesh exactly.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.geometry import dual_quaternion as dq


def vertex_neighbourhoods(faces: np.ndarray, rest: np.ndarray, k_fallback: int = 8,
                          collinear_ratio: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Padded neighbourhoods: indices (n, K) int64 with column 0 the vertex itself, and
    mask (n, K) bool marking real entries (padding repeats the vertex with mask False)."""
    rest = np.asarray(rest, dtype=np.float64)
    n = len(rest)
    faces = np.asarray(faces, dtype=np.int64)
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]], axis=0)
    edges = np.unique(np.concatenate([edges, edges[:, ::-1]], axis=0), axis=0)  # sorted by source
    degree = np.bincount(edges[:, 0], minlength=n)
    start = np.concatenate([[0], np.cumsum(degree)[:-1]])
    slot = np.arange(len(edges)) - start[edges[:, 0]]
    width = max(int(degree.max(initial=0)), k_fallback) + 1
    index = np.repeat(np.arange(n)[:, None], width, axis=1)
    mask = np.zeros((n, width), bool)
    mask[:, 0] = True
    index[edges[:, 0], slot + 1] = edges[:, 1]
    mask[edges[:, 0], slot + 1] = True

    offsets = np.where(mask[..., None], rest[index] - rest[:, None, :], 0.0)
    covariance = np.einsum("nka,nkb->nab", offsets, offsets)
    eig = np.linalg.eigvalsh(covariance)  # ascending
    degenerate = (degree < 2) | (eig[:, 1] <= collinear_ratio * np.maximum(eig[:, 2], 1e-300))
    if degenerate.any():
        from scipy.spatial import cKDTree

        k = min(k_fallback + 1, n)
        _, near = cKDTree(rest).query(rest[degenerate], k=k)
        near = np.asarray(near).reshape(-1, k)
        rows = np.flatnonzero(degenerate)
        index[rows] = rows[:, None]
        mask[rows] = False
        mask[rows, 0] = True
        others = np.array([row[row != i][: k - 1] for row, i in zip(near, rows)]).reshape(len(rows), -1)
        index[rows, 1: 1 + others.shape[1]] = others
        mask[rows, 1: 1 + others.shape[1]] = True
    return index, mask


def fit_rotations(rest: np.ndarray, frames: np.ndarray, index: np.ndarray, mask: np.ndarray,
                  exact_at_vertex: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Best proper rotations R (T, n, 3, 3) and translations t (T, n, 3) with x ~ R p + t on
    each neighbourhood. rest (n, 3), frames (T, n, 3), index/mask from `vertex_neighbourhoods`."""
    rest = np.asarray(rest, dtype=np.float64)
    frames = np.asarray(frames, dtype=np.float64)
    w = mask.astype(np.float64)
    P = rest[index]            # (n, K, 3)
    Q = frames[:, index]       # (T, n, K, 3)
    if exact_at_vertex:
        p_anchor = rest                        # (n, 3)
        q_anchor = frames                      # (T, n, 3)
    else:
        total = w.sum(axis=1, keepdims=True)
        p_anchor = np.einsum("nk,nka->na", w, P) / total
        q_anchor = np.einsum("nk,tnka->tna", w, Q) / total
    P = P - p_anchor[:, None, :]
    Q = Q - q_anchor[:, :, None, :]
    H = np.einsum("nk,nka,tnkb->tnab", w, P, Q)       # sum_k w p q^T
    U, _, Vt = np.linalg.svd(H)
    V = np.swapaxes(Vt, -1, -2)
    sign = np.sign(np.linalg.det(V @ np.swapaxes(U, -1, -2)))
    sign[sign == 0] = 1.0
    V[..., :, 2] *= sign[..., None]
    R = V @ np.swapaxes(U, -1, -2)
    t = q_anchor - np.einsum("tnab,nb->tna", R, p_anchor)
    return R, t


def fit_vertex_dual_quaternions(rest: np.ndarray, frames: np.ndarray, faces: np.ndarray,
                                exact_at_vertex: bool = True, k_fallback: int = 8) -> np.ndarray:
    """Per-vertex unit dual quaternions (T, n, 8) float32 taking rest (n, 3) towards frames
    (T, n, 3) (metres), from one-ring Kabsch fits over the mesh `faces` (F, 3)."""
    index, mask = vertex_neighbourhoods(faces, rest, k_fallback)
    R, t = fit_rotations(rest, frames, index, mask, exact_at_vertex)
    return dq.normalise(dq.from_rotation_translation(R, t)).astype(np.float32)


def fit_errors(rest: np.ndarray, frames: np.ndarray, faces: np.ndarray, dual_quaternions: np.ndarray,
               k_fallback: int = 8) -> dict:
    """How well per-vertex transforms explain a motion, in metres.

    vertex_max: max |D_i(p_i) - x_i| over vertices and frames;
    ring_rms / ring_max: D_i applied to the rest neighbourhood of i versus its frame positions.
    """
    rest = np.asarray(rest, dtype=np.float64)
    frames = np.asarray(frames, dtype=np.float64)
    d = np.asarray(dual_quaternions, dtype=np.float64)
    vertex = np.linalg.norm(dq.apply(d, rest[None]) - frames, axis=-1)
    index, mask = vertex_neighbourhoods(faces, rest, k_fallback)
    moved = dq.apply(d[:, :, None, :], rest[index][None])        # (T, n, K, 3)
    ring = np.linalg.norm(moved - frames[:, index], axis=-1)[:, mask]
    return {"vertex_max": float(vertex.max()), "ring_rms": float(np.sqrt(np.mean(ring ** 2))),
            "ring_max": float(ring.max())}
