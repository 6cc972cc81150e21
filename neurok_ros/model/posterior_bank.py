"""Posterior bank: the prior of a mesh taken from the posteriors of similar training shapes.

With the KL weight of 0.01 (docs/architecture.md §6) the posteriors do not fill N(mu, I). Measured on the shipped
model (docs/model.md, "Posterior bank"): the posterior means of a test laptop's poses lie 9-16
latent units from its rest latent and span lid angles of -67 to +43 degrees. Draws from N(mu, I) at
the same distance go in directions the decoder hardly uses and turn the lid by a few degrees.

The bank keeps, for pairs (a, b) of training poses (a != b), two latents of k = K * F_token values:
  key    = mu(M_a), the prior mean E_cond gives the pose-a mesh;
  offset = mean q(z | a -> b) - mean q(z | a -> a), the latent step from "no deformation" to pose b.
For an unseen mesh, the `neighbours` entries whose keys are nearest its own mu hold the motions of
similar shapes, and z = z_rest + offset moves it (z_rest: its own "no deformation" mean). Drawing
one of those offsets is drawing from the aggregate posterior of the nearest training shapes: an
empirical, shape-conditional prior fitted after training (as a two-stage VAE fits its second
stage), stored in the checkpoint under "posterior_bank" and built by `neurok bank`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

BANK_FORMAT_VERSION = 1


@dataclass
class PosteriorBank:
    """keys, offsets: (E, k) float16 latents (module docstring); neighbours: entries one mesh draws
    from; facts: how it was built (dataset, pairs per instance, seed)."""

    keys: torch.Tensor
    offsets: torch.Tensor
    neighbours: int
    facts: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.keys.ndim != 2 or self.keys.shape != self.offsets.shape or len(self.keys) == 0:
            raise ValueError(f"posterior bank: keys {tuple(self.keys.shape)} and offsets "
                             f"{tuple(self.offsets.shape)} must be the same non-empty (E, k)")
        if self.neighbours < 1:
            raise ValueError(f"posterior bank: neighbours must be positive, got {self.neighbours}")

    @property
    def k(self) -> int:
        return int(self.keys.shape[1])

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def nearest_offsets(self, prior_mean: torch.Tensor, count: int | None = None) -> torch.Tensor:
        """The offsets (min(count, E), k) of the `count` entries (default: neighbours) whose keys are
        nearest prior_mean (k,), nearest first, in prior_mean's dtype and device."""
        key = prior_mean.detach().reshape(1, -1).to(self.keys.device, torch.float32)
        if key.shape[1] != self.k:
            raise ValueError(f"posterior bank of k = {self.k} cannot serve a latent of size {key.shape[1]}")
        distances = torch.cdist(key, self.keys.float())[0]
        nearest = torch.argsort(distances)[:self.neighbours if count is None else count]
        return self.offsets[nearest].to(prior_mean.device, prior_mean.dtype)

    def to_payload(self) -> dict:
        """Tensors and primitives only, for a weights_only checkpoint."""
        return {"format_version": BANK_FORMAT_VERSION, "keys": self.keys.to(torch.float16).contiguous(),
                "offsets": self.offsets.to(torch.float16).contiguous(), "neighbours": int(self.neighbours),
                "facts": dict(self.facts)}

    @classmethod
    def from_payload(cls, payload: dict) -> "PosteriorBank":
        if payload.get("format_version", 0) > BANK_FORMAT_VERSION:
            raise ValueError(f"posterior bank format {payload['format_version']} is newer than this "
                             f"library's {BANK_FORMAT_VERSION}")
        return cls(payload["keys"], payload["offsets"], int(payload["neighbours"]), dict(payload.get("facts", {})))


def bank_draws(offsets: torch.Tensor, rest_latent: torch.Tensor, count: int, seed: int = 0,
               temperature: float = 1.0) -> torch.Tensor:
    """count latents (count, k) z = z_rest + temperature * offset, the offsets (E, k) drawn uniformly
    without replacement (with replacement once count exceeds E)."""
    generator = torch.Generator().manual_seed(int(seed))
    total = offsets.shape[0]
    if count <= total:
        chosen = torch.randperm(total, generator=generator)[:count]
    else:
        chosen = torch.randint(total, (count,), generator=generator)
    return rest_latent.reshape(1, -1) + temperature * offsets[chosen.to(offsets.device)]
