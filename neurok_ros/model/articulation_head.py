"""Articulation head: per-point joint predictions for a static shape, on NeuROK's shape tokens.

    head = ArticulationHead(width=128)
    out = head(shape_tokens, query_points)   # shape tokens (B, K, W) of E_cond; queries (B, N, 3)
    out.logits  (B, N, 3)  the joint that moves the point directly: 0 none (the base), 1 revolute,
                           2 prismatic
    out.axis    (B, N, 3)  unit direction of that joint's axis (sign free)
    out.offset  (B, N, 3)  from the point to the nearest point of the revolute axis line
All in the normalised object frame (bounding-box centre 0, longest side 1). E_cond stays frozen: the
head reads what the kinematic prior already encodes about the shape, and learns from the procedural
data's exact joints what the learned motions alone leave unclear (docs/articulation.md).

Blocks: Fourier embedding of the queries; the shape tokens, lifted, mixed by one self-attention
block; two cross-attention blocks (queries -> tokens) around one self-attention block among the
queries (points compare themselves with the rest of the shape); an MLP head.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
from torch import nn

from neurok_ros.model.attention import CrossAttentionBlock, SelfAttentionBlock
from neurok_ros.model.fourier_embedding import PointEmbedding
from neurok_ros.model.layer_norm import LayerNorm

JOINT_CLASSES = ("none", "revolute", "prismatic")


@dataclass
class HeadOutput:
    logits: torch.Tensor
    axis: torch.Tensor
    offset: torch.Tensor


class ArticulationHead(nn.Module):
    """See the module docstring; width: token width of the NeuROK model it reads."""

    def __init__(self, width: int = 128, heads: int = 4, fourier_frequencies: int = 8, mlp_ratio: float = 2.0):
        super().__init__()
        self.config = {"width": width, "heads": heads, "fourier_frequencies": fourier_frequencies,
                       "mlp_ratio": mlp_ratio}
        self.shape_in = nn.Linear(width, width)
        self.token_block = SelfAttentionBlock(width, heads, mlp_ratio)
        self.query_embedding = PointEmbedding(width, fourier_frequencies)
        self.cross_first = CrossAttentionBlock(width, heads, mlp_ratio)
        self.among_queries = SelfAttentionBlock(width, heads, mlp_ratio)
        self.cross_second = CrossAttentionBlock(width, heads, mlp_ratio)
        self.out = nn.Sequential(LayerNorm(width), nn.Linear(width, width), nn.GELU(), nn.Linear(width, 9))

    def forward(self, shape_tokens: torch.Tensor, query_points: torch.Tensor) -> HeadOutput:
        context = self.token_block(self.shape_in(shape_tokens))
        x = self.query_embedding(query_points)
        x = self.cross_first(x, context)
        x = self.among_queries(x)
        x = self.cross_second(x, context)
        raw = self.out(x)
        axis = raw[..., 3:6] / raw[..., 3:6].norm(dim=-1, keepdim=True).clamp_min(1e-6)
        return HeadOutput(raw[..., :3], axis, raw[..., 6:9])


def head_loss(out: HeadOutput, classes: torch.Tensor, axis: torch.Tensor, offset: torch.Tensor,
              offset_weight: float = 4.0) -> tuple[torch.Tensor, dict]:
    """Cross-entropy of the joint class, 1 - (a . a_true)^2 on moving points (sign free) and the L1
    offset error on revolute points. classes (B, N) int64; axis, offset (B, N, 3)."""
    ce = nn.functional.cross_entropy(out.logits.reshape(-1, 3), classes.reshape(-1))
    moving = classes > 0
    revolute = classes == 1
    axis_error = (1.0 - (out.axis * axis).sum(-1).square())[moving].mean() if moving.any() else ce * 0
    offset_error = (out.offset - offset).abs().sum(-1)[revolute].mean() if revolute.any() else ce * 0
    loss = ce + axis_error + offset_weight * offset_error
    return loss, {"ce": float(ce.detach()), "axis": float(axis_error.detach()), "offset": float(offset_error.detach())}


def save_head(path, head: ArticulationHead, facts: dict) -> None:
    """Tensors and primitives only, so it loads with torch.load(weights_only=True); weights stored as
    float16 (half the file; load_head computes in float32, and the readout's numbers are unchanged)."""
    torch.save({"format": "neurok-articulation-head", "config": head.config,
                "state": {k: (v.detach().cpu().half() if v.is_floating_point() else v.detach().cpu().clone())
                          for k, v in head.state_dict().items()},
                "facts": dict(facts)}, path)


def load_head(path, device: str | torch.device = "cpu") -> ArticulationHead:
    """The head saved by save_head, in eval mode; NeurokInputError for a file that is not one."""
    from neurok_ros.errors import NeurokInputError

    try:
        payload = torch.load(path, map_location=device, weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as exc:  # a file torch cannot read as a weights-only checkpoint
        raise NeurokInputError(f"{path}: not a readable articulation head ({type(exc).__name__})") from None
    if not isinstance(payload, dict) or payload.get("format") != "neurok-articulation-head":
        raise NeurokInputError(f"{path}: not a NeuROK articulation head")
    head = ArticulationHead(**payload["config"])
    head.load_state_dict(payload["state"])
    return head.to(device).eval()


@functools.lru_cache(maxsize=4)
def _cached_head(path: str, device: str) -> ArticulationHead:
    return load_head(path, device)


def model_head(model) -> ArticulationHead | None:
    """The articulation head trained on `model` (its `articulation_head_file`, set for the shipped
    model by kinematics.instance.load_default_model), loaded once per file and device; None for a
    model without one."""
    path = getattr(model, "articulation_head_file", None)
    if path is None:
        return None
    return _cached_head(str(path), str(next(model.parameters()).device))
