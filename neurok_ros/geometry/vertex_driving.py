"""Drive every mesh vertex by its k nearest surface samples (docs/architecture.md §4).

A vertex takes the inverse-distance-weighted blend of the deformations of its k nearest samples:
dual-quaternion linear blending for per-sample rigid transforms (rigid parts stay rigid), or a
weighted mean for per-sample displacements. Works on numpy arrays and torch tensors (autograd too),
with any leading batch dims (e.g. time).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.geometry import dual_quaternion as dq


@dataclass
class VertexDriver:
    """indices: (n, k) int64, sample indices of each vertex's k nearest samples;
    weights: (n, k) float64, non-negative, rows sum to 1."""

    indices: np.ndarray
    weights: np.ndarray


def build_vertex_driver(vertices, sample_points, k: int = 6) -> VertexDriver:
    """k-nearest-sample inverse-distance weights for (n, 3) vertices and (s, 3) samples (same frame).

    Weights are 1 / distance, normalised per vertex; a vertex that coincides with a sample
    (distance below 1e-12 of the samples' bounding-box diagonal) takes that sample with weight 1.
    k is clipped to the number of samples.
    """
    from scipy.spatial import cKDTree

    V = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    S = np.asarray(sample_points, dtype=np.float64).reshape(-1, 3)
    if len(S) == 0:
        raise ValueError("cannot drive vertices without sample points")
    k = max(1, min(int(k), len(S)))
    distances, indices = cKDTree(S).query(V, k=k)
    distances = distances.reshape(len(V), k)
    indices = indices.reshape(len(V), k).astype(np.int64)
    eps = 1e-12 * max(float(np.linalg.norm(S.max(axis=0) - S.min(axis=0))), 1e-300)
    coincident = distances[:, 0] <= eps
    weights = 1.0 / np.maximum(distances, eps)
    weights[coincident] = 0.0
    weights[coincident, 0] = 1.0
    weights /= weights.sum(axis=1, keepdims=True)
    return VertexDriver(indices=indices, weights=weights)


def _as_like(array, like, integer: bool = False):
    """`array` as a torch tensor on `like`'s device and float dtype when `like` is a tensor;
    otherwise a numpy array (numpy type promotion then keeps float64 precision)."""
    if type(like).__module__.startswith("torch"):
        import torch

        if integer:
            return torch.as_tensor(array, dtype=torch.int64, device=like.device)
        return torch.as_tensor(array, dtype=like.dtype, device=like.device)
    return np.asarray(array)


def drive_vertices_dq(driver: VertexDriver, vertices, sample_dqs):
    """Deformed vertices from per-sample unit dual quaternions.

    vertices: (n, 3) rest positions, mesh frame; sample_dqs: (..., s, 8) transforms of the samples
    (in the same frame). Returns (..., n, 3): each vertex moved by the dual-quaternion linear blend
    of its k samples' transforms.
    """
    index = _as_like(driver.indices, sample_dqs, integer=True)
    weights = _as_like(driver.weights, sample_dqs)
    rest = _as_like(vertices, sample_dqs)
    gathered = sample_dqs[..., index, :]  # (..., n, k, 8)
    return dq.apply(dq.blend(gathered, weights), rest)


def drive_vertices_displacement(driver: VertexDriver, vertices, sample_displacements):
    """Deformed vertices from per-sample displacements.

    vertices: (n, 3) rest positions; sample_displacements: (..., s, 3), same units.
    Returns (..., n, 3) = rest + inverse-distance-weighted mean of the k samples' displacements.
    """
    index = _as_like(driver.indices, sample_displacements, integer=True)
    weights = _as_like(driver.weights, sample_displacements)
    rest = _as_like(vertices, sample_displacements)
    gathered = sample_displacements[..., index, :]  # (..., n, k, 3)
    return rest + (gathered * weights[..., None]).sum(-2)


def blend_matrix(driver: VertexDriver, num_samples: int, like):
    """The driver as a sparse (n, s) torch matrix of blend weights (COO), on `like`'s device and dtype."""
    import torch

    n, k = driver.indices.shape
    rows = np.repeat(np.arange(n), k)
    coo = torch.sparse_coo_tensor(np.stack([rows, driver.indices.reshape(-1)]), driver.weights.reshape(-1),
                                  (n, num_samples), dtype=like.dtype, device=like.device,
                                  check_invariants=True)  # built here from valid indices: cheap to check
    return coo.coalesce()


def drive_vertices_dq_frames(matrix, vertices, sample_dqs):
    """drive_vertices_dq for many frames at once, without autograd: sample_dqs (B, s, 8) torch,
    vertices (n, 3) torch, matrix from blend_matrix. Returns (B, n, 3).

    One sparse product blends all frames, instead of gathering (B, n, k, 8). Antipodal quaternions
    are aligned per sample to the rest orientation (real part w >= 0), not per vertex to its first
    neighbour: the same blend whenever a sample has turned less than 180 degrees from rest (always
    so for rest-anchored decoding of an object's motion; the gathering form covers the rest)."""
    frames, samples = sample_dqs.shape[:2]
    aligned = dq.canonical_sign(sample_dqs)
    blended = (matrix @ aligned.permute(1, 0, 2).reshape(samples, frames * 8)).reshape(-1, frames, 8)
    return dq.apply(dq.normalise(blended.permute(1, 0, 2)), vertices)

