"""Layer normalisation that stays correct under nested forward-mode AD.

torch 2.13's fused layer_norm has a correct first-order forward-mode derivative, but its derivative
formula is not itself correctly differentiated by forward mode: jvp of jvp through F.layer_norm /
nn.LayerNorm gives wrong second directional derivatives (checked against finite differences in
test_model_shapes.py). The dynamics needs d2x/dz2[v, v] by nested jvp, so whenever forward-mode AD
may be active (a torch.func transform or a forward_ad dual level) this module computes the norm from
elementary ops; otherwise (training, plain inference) it calls the fused kernel, ~4x faster with
backward. When torch's private markers cannot be read, it always takes the elementary path.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import forward_ad

try:
    from torch._C._functorch import is_functorch_wrapped_tensor as _is_wrapped
except ImportError:  # pragma: no cover - torch internals moved: be safe
    _is_wrapped = None


def forward_ad_may_be_active(x: torch.Tensor) -> bool:
    """True inside torch.func transforms (x is a wrapped tensor) or a forward_ad dual level."""
    if _is_wrapped is None or _is_wrapped(x):
        return True
    return getattr(forward_ad, "_current_level", 0) >= 0


def layer_norm_elementary(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    """(..., W) -> (x - mean) / sqrt(var + eps) * weight + bias over the last dim (biased variance)."""
    centred = x - x.mean(dim=-1, keepdim=True)
    variance = (centred * centred).mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(variance + eps) * weight + bias


class LayerNorm(nn.Module):
    """Same parameters and values as nn.LayerNorm(W) over the last dim of (..., W)."""

    def __init__(self, width: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if forward_ad_may_be_active(x):
            return layer_norm_elementary(x, self.weight, self.bias, self.eps)
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)
