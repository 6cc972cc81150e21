"""Variational deformation encoder E_vae(delta, M0): q(z | delta) = N(mean, diag exp(logvar))."""
from __future__ import annotations

import torch
from torch import nn

from neurok_ros.model.config import ModelConfig
from neurok_ros.model.fourier_embedding import PointEmbedding
from neurok_ros.model.perceiver import Perceiver

LOGVAR_RANGE = (-12.0, 6.0)


class DeformationEncoder(nn.Module):
    """points (B, N, 3) on M0 and their deformation (B, N, 8) dual quaternions (sign-canonical,
    w >= 0) or (B, N, 3) displacements, normalised frame -> mean, logvar (B, K, F_token) each.

    The deformation is concatenated to the Fourier features before the embedding's linear layer;
    a perceiver with 2K tokens summarises; the first K tokens give the mean, the last K the
    log-variance (clamped to LOGVAR_RANGE for numerical safety)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.num_tokens = config.num_tokens
        self.embedding = PointEmbedding(config.width, config.fourier_frequencies,
                                        extra_features=config.output_size)
        self.perceiver = Perceiver(config.width, config.heads, 2 * config.num_tokens,
                                   config.perceiver_self_blocks, config.mlp_ratio)
        self.to_latent = nn.Linear(config.width, config.token_dim)

    def forward(self, points: torch.Tensor, deformation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        latent = self.to_latent(self.perceiver(self.embedding(points, deformation)))
        mean, logvar = latent[:, :self.num_tokens], latent[:, self.num_tokens:]
        return mean, logvar.clamp(*LOGVAR_RANGE)
