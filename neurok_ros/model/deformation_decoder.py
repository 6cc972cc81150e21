"""Deformation decoder D(z; M0): latent tokens (+ M0's shape tokens) -> per-point deformation.

z is reshaped to K tokens and lifted to the model width; with `decoder_shape_tokens` the K shape
tokens of E_cond join them (2K context tokens). A few self-attention blocks mix the context tokens
(cost independent of the number of query points); then the query points, embedded like every
point set, cross-attend to the context in `decoder_query_blocks` blocks; an MLP head predicts a unit
dual quaternion (normalised; the head starts at the identity) or a displacement (starts at zero).

Query-only work (the Fourier embedding of the query points and the first block's query projection)
does not depend on z: `prepare_queries` computes it once per point set, and `forward` reuses it.
The simulator decodes hundreds of times for fixed query points, differentiating with respect to z.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.model.attention import CrossAttentionBlock, SelfAttentionBlock
from neurok_ros.model.config import ModelConfig
from neurok_ros.model.fourier_embedding import PointEmbedding
from neurok_ros.model.layer_norm import LayerNorm


@dataclass
class QueryCache:
    """Precomputed query-side tensors for one point set (valid for the weights they came from).

    points: (B or 1, N, 3) normalised frame; tokens: (B or 1, N, W) embedded points;
    first_query: (B or 1, H, N, W / H) the first cross-attention block's projected queries."""

    points: torch.Tensor
    tokens: torch.Tensor
    first_query: torch.Tensor


class DeformationDecoder(nn.Module):
    """z (B, K, F_token) or (B, K * F_token) [+ shape tokens (B, K, W)], query points (B or 1, N, 3)
    -> (B, N, 8) unit dual quaternions or (B, N, 3) displacements, normalised object frame."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        W = config.width
        self.latent_in = nn.Linear(config.token_dim, W)
        self.latent_position = nn.Parameter(torch.randn(config.num_tokens, W) * 0.02)
        self.shape_in = nn.Linear(W, W) if config.decoder_shape_tokens else None
        self.token_blocks = nn.ModuleList(
            SelfAttentionBlock(W, config.heads, config.mlp_ratio) for _ in range(config.decoder_token_blocks))
        self.query_embedding = PointEmbedding(W, config.fourier_frequencies)
        self.query_blocks = nn.ModuleList(
            CrossAttentionBlock(W, config.heads, config.mlp_ratio) for _ in range(config.decoder_query_blocks))
        self.head = nn.Sequential(LayerNorm(W), nn.Linear(W, W), nn.GELU(), nn.Linear(W, config.output_size))
        with torch.no_grad():  # start at "no deformation"
            self.head[-1].weight.zero_()
            self.head[-1].bias.zero_()
            if config.output == "dual_quaternion":
                self.head[-1].bias[0] = 1.0

    def prepare_queries(self, query_points: torch.Tensor) -> QueryCache:
        """query_points (N, 3) or (B, N, 3), normalised frame -> QueryCache."""
        points = query_points[None] if query_points.dim() == 2 else query_points
        tokens = self.query_embedding(points)
        return QueryCache(points, tokens, self.query_blocks[0].project_query(tokens))

    def context_tokens(self, z: torch.Tensor, shape_tokens: torch.Tensor | None) -> torch.Tensor:
        """The tokens the queries attend to: (B, K, W), or (B, 2K, W) with shape tokens."""
        cfg = self.config
        z = z.reshape(z.shape[0], cfg.num_tokens, cfg.token_dim)
        context = self.latent_in(z) + self.latent_position
        if self.shape_in is not None:
            if shape_tokens is None:
                raise ValueError("this decoder attends to shape tokens: pass shape_tokens from encode_prior")
            shape = self.shape_in(shape_tokens)
            if shape.shape[0] != context.shape[0]:
                shape = shape.expand(context.shape[0], *shape.shape[1:])
            context = torch.cat([context, shape], dim=1)
        for block in self.token_blocks:
            context = block(context)
        return context

    def forward(self, z: torch.Tensor, query_points: torch.Tensor | None = None,
                shape_tokens: torch.Tensor | None = None, query_cache: QueryCache | None = None) -> torch.Tensor:
        if query_cache is None:
            if query_points is None:
                raise ValueError("pass query_points or a query_cache from prepare_queries")
            query_cache = self.prepare_queries(query_points)
        context = self.context_tokens(z, shape_tokens)
        x = query_cache.tokens
        for i, block in enumerate(self.query_blocks):
            x = block(x, context, projected_query=query_cache.first_query if i == 0 else None)
        raw = self.head(x)
        return dq.normalise(raw) if self.config.output == "dual_quaternion" else raw
