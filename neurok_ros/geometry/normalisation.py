"""The normalising transform of docs/architecture.md §4: bounding-box centre to the origin, longest side to 1.

normalised = (p - centre) * scale; p = normalised / scale + centre. Every output of the library
goes back to the input mesh's frame and units through `invert`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.errors import MeshError


def _like(value: np.ndarray, points):
    """`value` as the array type of `points` (a numpy array or a torch tensor)."""
    if type(points).__module__.startswith("torch"):
        import torch

        return torch.as_tensor(value, dtype=points.dtype, device=points.device)
    return value


@dataclass
class NormalisingTransform:
    """centre: (3,) float64, mesh units, mesh frame; scale: float, 1 / mesh units."""

    centre: np.ndarray
    scale: float

    def __post_init__(self):
        self.centre = np.asarray(self.centre, dtype=np.float64).reshape(3)
        self.scale = float(self.scale)
        if not np.isfinite(self.centre).all() or not np.isfinite(self.scale) or self.scale <= 0:
            raise MeshError(f"invalid normalising transform: centre {self.centre.tolist()}, "
                            f"scale {self.scale}")

    @classmethod
    def from_vertices(cls, vertices) -> "NormalisingTransform":
        """Transform of (n, 3) vertices; MeshError when they are empty, non-finite or all coincide."""
        V = np.asarray(vertices, dtype=np.float64)
        if V.ndim != 2 or V.shape[1] != 3 or len(V) == 0:
            raise MeshError(f"cannot normalise vertices of shape {V.shape}: need (n, 3), n > 0")
        if not np.isfinite(V).all():
            raise MeshError("cannot normalise non-finite vertices")
        low, high = V.min(axis=0), V.max(axis=0)
        longest = float((high - low).max())
        if not longest > 0:
            raise MeshError("cannot normalise a mesh of zero size (all vertices coincide)")
        return cls(centre=0.5 * (low + high), scale=1.0 / longest)

    def apply(self, points):
        """Mesh frame -> normalised frame; points (..., 3), numpy or torch, same type back."""
        return (points - _like(self.centre, points)) * self.scale

    def invert(self, points):
        """Normalised frame -> mesh frame and units; points (..., 3), numpy or torch."""
        return points / self.scale + _like(self.centre, points)

    def to_dict(self) -> dict:
        """Plain JSON/YAML-safe form: {"centre": [x, y, z], "scale": s}."""
        return {"centre": [float(c) for c in self.centre], "scale": float(self.scale)}

    @classmethod
    def from_dict(cls, data: dict) -> "NormalisingTransform":
        return cls(centre=data["centre"], scale=data["scale"])
