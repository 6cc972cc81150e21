"""A vector field on a regular grid over a cube of the normalised frame: written from scattered samples
by inverse-distance weighting, read anywhere by trilinear interpolation (torch, differentiable).

Node (i, j, l) sits at low + (i, j, l) * step with step = (high - low) / (resolution - 1); flattened
node index (i * R + j) * R + l (C order), so values (R, R, R, C) reshape to (R^3, C) and back.
Points outside the cube read the value of the nearest point of the cube (clamped).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class RegularGrid:
    """resolution R nodes per axis over [low, high]^3 (normalised units)."""

    resolution: int = 8
    low: float = -0.6
    high: float = 0.6

    def __post_init__(self):
        if self.resolution < 2 or not self.high > self.low:
            raise ValueError(f"invalid grid: resolution {self.resolution}, [{self.low}, {self.high}]")

    @property
    def num_nodes(self) -> int:
        return self.resolution ** 3

    @property
    def step(self) -> float:
        return (self.high - self.low) / (self.resolution - 1)

    def nodes(self) -> np.ndarray:
        """(R^3, 3) float64 node positions in flattened order."""
        axis = np.linspace(self.low, self.high, self.resolution)
        x, y, z = np.meshgrid(axis, axis, axis, indexing="ij")
        return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)


def splat_inverse_distance(grid: RegularGrid, points: np.ndarray, values: np.ndarray,
                           neighbours: int = 8, eps: float = 1e-9) -> np.ndarray:
    """(R^3, C): every node takes the inverse-distance-weighted mean of the values (N, C) of its
    `neighbours` nearest points (N, 3); a node on a point takes that point's value."""
    from scipy.spatial import cKDTree

    points = np.asarray(points, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64).reshape(len(points), -1)
    k = min(int(neighbours), len(points))
    distances, index = cKDTree(points).query(grid.nodes(), k=k)
    distances, index = distances.reshape(grid.num_nodes, k), index.reshape(grid.num_nodes, k)
    weights = 1.0 / np.maximum(distances, eps)
    weights /= weights.sum(axis=1, keepdims=True)
    return np.einsum("gk,gkc->gc", weights, values[index])


def trilinear(values: torch.Tensor, points: torch.Tensor, grid: RegularGrid) -> torch.Tensor:
    """Trilinear interpolation of node values (..., R, R, R, C) at points (N, 3) -> (..., N, C).

    Differentiable in the values (and, almost everywhere, in the points); reproduces any affine
    field exactly inside the cube."""
    R = grid.resolution
    if tuple(values.shape[-4:-1]) != (R, R, R):
        raise ValueError(f"grid values of shape {tuple(values.shape)} do not match resolution {R}")
    flat = values.reshape(*values.shape[:-4], R ** 3, values.shape[-1])
    u = ((points.to(values.dtype) - grid.low) / grid.step).clamp(0.0, R - 1.0)
    base = u.detach().floor().clamp(max=R - 2).long()  # (N, 3): lower corner of the cell
    frac = u - base.to(u.dtype)
    out = None
    for dx in (0, 1):
        wx = frac[:, 0] if dx else 1.0 - frac[:, 0]
        for dy in (0, 1):
            wy = frac[:, 1] if dy else 1.0 - frac[:, 1]
            for dz in (0, 1):
                wz = frac[:, 2] if dz else 1.0 - frac[:, 2]
                index = ((base[:, 0] + dx) * R + (base[:, 1] + dy)) * R + (base[:, 2] + dz)
                term = flat[..., index, :] * (wx * wy * wz)[:, None]
                out = term if out is None else out + term
    return out
