"""Perceiver: K learnable tokens cross-attend to a point set, then self-attention blocks."""
from __future__ import annotations

import torch
from torch import nn

from neurok_ros.model.attention import CrossAttentionBlock, SelfAttentionBlock
from neurok_ros.model.layer_norm import LayerNorm


class Perceiver(nn.Module):
    """point_tokens (B, N, W) -> (B, num_tokens, W), layer-normed; N may vary between calls."""

    def __init__(self, width: int, heads: int, num_tokens: int, self_blocks: int, mlp_ratio: float):
        super().__init__()
        self.tokens = nn.Parameter(torch.randn(num_tokens, width) * 0.02)
        self.cross = CrossAttentionBlock(width, heads, mlp_ratio)
        self.blocks = nn.ModuleList(SelfAttentionBlock(width, heads, mlp_ratio) for _ in range(self_blocks))
        self.norm = LayerNorm(width)

    def forward(self, point_tokens: torch.Tensor) -> torch.Tensor:
        x = self.tokens.expand(point_tokens.shape[0], *self.tokens.shape)
        x = self.cross(x, point_tokens)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)
