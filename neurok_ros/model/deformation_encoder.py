"""Variational deformation encoder E_vae(delta, M0): q(z | delta) = N(mean, diag exp(logvar))."""
from __future__ import annotations

import torch
from torch import nn

from neurok_ros.model.config import ModelConfig
from neurok_ros.model.deformation_output import apply_deformation
from neurok_ros.model.fourier_embedding import PointEmbedding, fourier_features
from neurok_ros.model.perceiver import Perceiver

LOGVAR_RANGE = (-12.0, 6.0)


class DeformationEncoder(nn.Module):
    """points (B, N, 3) on M0 and their deformation (B, N, 8) dual quaternions (sign-canonical,
    w >= 0) or (B, N, 3) displacements, normalised frame -> mean, logvar (B, K, F_token) each.

    The deformation is concatenated to the Fourier features before the embedding's linear layer
    (with `encoder_moved_points`, so are the Fourier features of where each point moves: a
    translation of a few hundredths then reaches the encoder as strongly as the shape does, where
    raw dual-quaternion or displacement numbers of that size are drowned by the unit-sized
    features of the points); a perceiver with 2K tokens summarises; the first K tokens give the
    mean, the last K the log-variance (clamped to LOGVAR_RANGE for numerical safety)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.num_tokens = config.num_tokens
        self.output = config.output
        self.moved_features = 3 + 6 * config.fourier_frequencies if config.encoder_moved_points else 0
        self.embedding = PointEmbedding(config.width, config.fourier_frequencies,
                                        extra_features=config.output_size + self.moved_features)
        self.perceiver = Perceiver(config.width, config.heads, 2 * config.num_tokens,
                                   config.perceiver_self_blocks, config.mlp_ratio)
        self.to_latent = nn.Linear(config.width, config.token_dim)

    def forward(self, points: torch.Tensor, deformation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = deformation
        if self.moved_features:
            moved = apply_deformation(deformation, points, self.output)
            features = torch.cat([deformation, fourier_features(moved, self.embedding.num_frequencies)], dim=-1)
        latent = self.to_latent(self.perceiver(self.embedding(points, features)))
        mean, logvar = latent[:, :self.num_tokens], latent[:, self.num_tokens:]
        return mean, logvar.clamp(*LOGVAR_RANGE)
