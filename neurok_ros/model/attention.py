"""Multi-head attention as explicit matmul + softmax, and pre-norm transformer blocks.

Written out by hand (no F.scaled_dot_product_attention, no nn.MultiheadAttention) because those do
not support forward-mode AD in torch 2.13, and the dynamics differentiates the decoder with
torch.func.jvp, nested twice. Shapes: B batch, N query tokens, M context tokens, W width.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from neurok_ros.model.layer_norm import LayerNorm


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Scaled dot-product attention; q (B, H, N, d), k and v (B, H, M, d) -> (B, H, N, d)."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


class MultiHeadAttention(nn.Module):
    """x (B, N, W) attends to context (B, M, W) -> (B, N, W).

    `project_query` and `attend_projected` split the query projection off, so that a caller with
    fixed queries (the decoder's query points) can compute it once and reuse it.
    """

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(width, width)
        self.to_k = nn.Linear(width, width)
        self.to_v = nn.Linear(width, width)
        self.out = nn.Linear(width, width)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        B, N, W = x.shape
        return x.reshape(B, N, self.heads, W // self.heads).transpose(1, 2)

    def project_query(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, W) -> (B, H, N, W / H) projected queries."""
        return self._split(self.to_q(x))

    def attend_projected(self, q: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """Projected queries (B or 1, H, N, d) and context (B, M, W) -> (B, N, W)."""
        k, v = self._split(self.to_k(context)), self._split(self.to_v(context))
        if q.shape[0] != k.shape[0]:
            q = q.expand(k.shape[0], *q.shape[1:])
        out = attend(q, k, v)
        B, H, N, d = out.shape
        return self.out(out.transpose(1, 2).reshape(B, N, H * d))

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        return self.attend_projected(self.project_query(x), context)


class MLP(nn.Module):
    """(..., W) -> Linear(W, ratio W) -> GELU -> Linear(ratio W, W)."""

    def __init__(self, width: int, ratio: float):
        super().__init__()
        hidden = max(1, int(round(width * ratio)))
        self.net = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class CrossAttentionBlock(nn.Module):
    """Pre-norm: x + Attn(LN(x), LN(context)), then + MLP(LN(.)); x (B, N, W), context (B, M, W)."""

    def __init__(self, width: int, heads: int, mlp_ratio: float):
        super().__init__()
        self.norm_query = LayerNorm(width)
        self.norm_context = LayerNorm(width)
        self.attention = MultiHeadAttention(width, heads)
        self.norm_mlp = LayerNorm(width)
        self.mlp = MLP(width, mlp_ratio)

    def project_query(self, x: torch.Tensor) -> torch.Tensor:
        """The context-independent part of the attention for queries x (B, N, W)."""
        return self.attention.project_query(self.norm_query(x))

    def forward(self, x: torch.Tensor, context: torch.Tensor,
                projected_query: torch.Tensor | None = None) -> torch.Tensor:
        """projected_query: `project_query(x)` computed earlier (x must then be the same tensor)."""
        q = self.project_query(x) if projected_query is None else projected_query
        x = x + self.attention.attend_projected(q, self.norm_context(context))
        return x + self.mlp(self.norm_mlp(x))


class SelfAttentionBlock(nn.Module):
    """Pre-norm: x + Attn(LN(x), LN(x)), then + MLP(LN(.)); x (B, N, W)."""

    def __init__(self, width: int, heads: int, mlp_ratio: float):
        super().__init__()
        self.norm = LayerNorm(width)
        self.attention = MultiHeadAttention(width, heads)
        self.norm_mlp = LayerNorm(width)
        self.mlp = MLP(width, mlp_ratio)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        x = x + self.attention(h, h)
        return x + self.mlp(self.norm_mlp(x))
