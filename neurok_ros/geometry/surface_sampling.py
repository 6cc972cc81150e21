"""Area-uniform surface samples kept as (face index, barycentric coordinates).

Because a sample is tied to a face and barycentrics rather than to a position, it can be
re-evaluated on any deformation of the same topology and can carry per-vertex fields.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.errors import MeshError
from neurok_ros.geometry.mesh_cleaning import face_double_areas, validate_mesh_arrays


@dataclass
class SurfaceSamples:
    """points: (count, 3) float64, mesh frame and units; face_ids: (count,) int64;
    barycentric: (count, 3) float64, weights of the face's three corners (rows sum to 1)."""

    points: np.ndarray
    face_ids: np.ndarray
    barycentric: np.ndarray


def sample_surface(vertices, faces, count: int, rng: np.random.Generator) -> SurfaceSamples:
    """Draw `count` points uniformly by area over the surface; deterministic given `rng`'s seed.

    A face is chosen with probability proportional to its area; inside it, with r1, r2 ~ U(0, 1)
    and s = sqrt(r1), the barycentrics (1 - s, s (1 - r2), s r2) are uniform over the triangle.
    Raises MeshError when the surface has zero total area.
    """
    V, F = validate_mesh_arrays(vertices, faces)
    count = int(count)
    if count < 0:
        raise ValueError(f"sample count must be non-negative, got {count}")
    cumulative = np.cumsum(face_double_areas(V, F))
    total = float(cumulative[-1])
    if not total > 0:
        raise MeshError("cannot sample a surface of zero area")
    face_ids = np.searchsorted(cumulative, rng.random(count) * total, side="right")
    face_ids = np.minimum(face_ids, len(F) - 1).astype(np.int64)
    s = np.sqrt(rng.random(count))
    r2 = rng.random(count)
    barycentric = np.stack([1.0 - s, s * (1.0 - r2), s * r2], axis=1)
    points = interpolate_vertex_field(V, F, face_ids, barycentric)
    return SurfaceSamples(points=points, face_ids=face_ids, barycentric=barycentric)


def interpolate_vertex_field(field, faces, face_ids, barycentric):
    """Interpolate a per-vertex field to samples.

    field: (..., n, C) numpy array or torch tensor; faces: (m, 3); face_ids: (count,);
    barycentric: (count, 3). Returns (..., count, C) of field's array type and dtype.
    """
    corner_ids = np.asarray(faces, dtype=np.int64)[np.asarray(face_ids, dtype=np.int64)]
    weights = np.asarray(barycentric, dtype=np.float64)
    if type(field).__module__.startswith("torch"):
        import torch

        index = torch.as_tensor(corner_ids, device=field.device)
        weights = torch.as_tensor(weights, dtype=field.dtype, device=field.device)
    else:
        field = np.asarray(field)
        index = corner_ids
        if field.dtype.kind == "f":
            weights = weights.astype(field.dtype)
    corners = field[..., index, :]  # (..., count, 3, C)
    return (corners * weights[..., None]).sum(-2)


def evaluate_samples(vertices_or_frames, faces, face_ids, barycentric):
    """Positions of the samples on a deformed mesh of the same topology.

    vertices_or_frames: (n, 3) or (T, n, 3) (any leading dims), numpy or torch.
    Returns (count, 3) or (T, count, 3), same units and frame as the input vertices.
    """
    return interpolate_vertex_field(vertices_or_frames, faces, face_ids, barycentric)
