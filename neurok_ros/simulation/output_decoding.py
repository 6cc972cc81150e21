"""Full-resolution meshes at the output frames only, in batches (the decoder is the cost).

Two ways, chosen by the vertex count:
- exact: every vertex is a decoder query (instance.decode), when the mesh has at most
  `output_points` vertices;
- driven: `output_points` area-uniform surface samples are decoded and every vertex follows its 6
  nearest samples (dual-quaternion blending of their rigid transforms, or blended displacements for
  a displacement model; docs/architecture.md §6). A 10k-vertex mesh at 61 frames is then 61 x 2048 decoder
  queries instead of 61 x 10k.
Frames are decoded in batches of at most `max_queries` query points per decoder call.
"""
from __future__ import annotations

import numpy as np
import torch

from neurok_ros.geometry.vertex_driving import (
    blend_matrix,
    build_vertex_driver,
    drive_vertices_displacement,
    drive_vertices_dq_frames,
)

DRIVER_NEIGHBOURS = 6


def _batches(count: int, per_frame: int, max_queries: int):
    step = max(1, max_queries // max(per_frame, 1))
    return [(i, min(i + step, count)) for i in range(0, count, step)]


@torch.no_grad()
def decode_frames(instance, z: torch.Tensor, output_points: int = 2048, seed: int = 0,
                  max_queries: int = 131072) -> tuple[np.ndarray, str]:
    """Vertices (T, n, 3) float32 in the input mesh's frame, units and vertex order for latents
    z (T, k) (instance.latent(q) for the instance's coordinates), and the mode used ("exact" or
    "driven")."""
    z = torch.as_tensor(z).to(instance.device, instance.prior_mean.dtype)
    count, vertices = z.shape[0], instance.vertices
    out = np.empty((count, len(vertices), 3), dtype=np.float32)
    if len(vertices) <= output_points:
        for a, b in _batches(count, len(vertices), max_queries):
            out[a:b] = instance.decode(z=z[a:b]).astype(np.float32)
        return out, "exact"
    _, normalised = instance.surface_samples(output_points, seed)
    cache = instance.query_cache(normalised)
    rest = instance.transform.apply(np.asarray(vertices, dtype=np.float64))
    driver = build_vertex_driver(rest, normalised.double().cpu().numpy(), DRIVER_NEIGHBOURS)
    rest_t = torch.as_tensor(rest, dtype=torch.float32, device=instance.device)
    matrix = blend_matrix(driver, output_points, rest_t)
    for a, b in _batches(count, output_points, max_queries):
        prediction = instance.deformations(z[a:b], cache)
        if instance.model.output == "dual_quaternion":
            moved = drive_vertices_dq_frames(matrix, rest_t, prediction)
        else:
            moved = drive_vertices_displacement(driver, rest_t, prediction)
        out[a:b] = instance.transform.invert(moved.double().cpu().numpy()).astype(np.float32)
    return out, "driven"
