"""Kinematic prior encoder E_cond(M0): surface points of the rest shape -> p(z) = N(mu, I)."""
from __future__ import annotations

import torch
from torch import nn

from neurok_ros.model.config import ModelConfig
from neurok_ros.model.fourier_embedding import PointEmbedding
from neurok_ros.model.perceiver import Perceiver


class PriorEncoder(nn.Module):
    """points (B, N, 3), normalised object frame -> (mu (B, K, F_token), shape tokens (B, K, W))."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.embedding = PointEmbedding(config.width, config.fourier_frequencies)
        self.perceiver = Perceiver(config.width, config.heads, config.num_tokens,
                                   config.perceiver_self_blocks, config.mlp_ratio)
        self.to_mean = nn.Linear(config.width, config.token_dim)

    def forward(self, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shape_tokens = self.perceiver(self.embedding(points))
        return self.to_mean(shape_tokens), shape_tokens
