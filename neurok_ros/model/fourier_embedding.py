"""Point embedding: Fourier features of xyz (3DShape2VecSet style) followed by a linear layer."""
from __future__ import annotations

import math

import torch
from torch import nn


def fourier_features(points: torch.Tensor, num_frequencies: int) -> torch.Tensor:
    """points (..., 3), normalised object frame (extent ~1) -> (..., 3 + 6 * num_frequencies):
    [xyz, sin(2^j pi xyz), cos(2^j pi xyz)] for j = 0 .. num_frequencies - 1."""
    frequencies = math.pi * 2.0 ** torch.arange(num_frequencies, dtype=points.dtype, device=points.device)
    angles = (points[..., :, None] * frequencies).flatten(-2)  # (..., 3 * num_frequencies)
    return torch.cat([points, torch.sin(angles), torch.cos(angles)], dim=-1)


class PointEmbedding(nn.Module):
    """(B, N, 3) points [+ (B, N, extra) per-point features] -> (B, N, width) float32 tokens."""

    def __init__(self, width: int, num_frequencies: int, extra_features: int = 0):
        super().__init__()
        self.num_frequencies = num_frequencies
        self.extra_features = extra_features
        self.linear = nn.Linear(3 + 6 * num_frequencies + extra_features, width)

    def forward(self, points: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        features = fourier_features(points, self.num_frequencies)
        if self.extra_features:
            if extra is None or extra.shape[-1] != self.extra_features:
                raise ValueError(f"expected {self.extra_features} extra features per point")
            features = torch.cat([features, extra], dim=-1)
        return self.linear(features)
