"""Active subspace of a decoder around the prior mean (docs/architecture.md §7).

Sample z_i ~ N(mu, I); G(z) = ||delta_pred(z)||_2 over the query points; C = mean(grad G grad G^T);
the eigenvectors of C with the largest eigenvalues span the directions in which the shape changes
most. Generalised coordinates q: z = mu + A q, A (k, k_q) with orthonormal columns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch


@dataclass
class Subspace:
    """basis: (k, k_q) orthonormal columns; eigenvalues: (k,) of C, descending; explained: fraction
    of trace(C) the k_q kept directions hold."""

    basis: torch.Tensor
    eigenvalues: torch.Tensor
    explained: float

    @property
    def num_coords(self) -> int:
        return int(self.basis.shape[1])


def whole_space(k: int, dtype: torch.dtype, device: torch.device | str = "cpu") -> Subspace:
    """The whole latent space as a subspace: A = I (k, k), k_q = k (no reduction)."""
    identity = torch.eye(k, dtype=dtype, device=device)
    return Subspace(identity, torch.ones(k, dtype=dtype, device=device), 1.0)


def gradient_outer_product(deformation_norm: Callable[[torch.Tensor], torch.Tensor], latents: torch.Tensor,
                           chunk: int = 32) -> torch.Tensor:
    """C = mean_i grad G(z_i) grad G(z_i)^T, (k, k), over latents (S, k); deformation_norm maps
    (B, k) -> (B,) and each output must depend on its own row only (so one backward gives every
    per-sample gradient)."""
    k = latents.shape[1]
    C = torch.zeros(k, k, dtype=latents.dtype, device=latents.device)
    for start in range(0, len(latents), chunk):
        z = latents[start:start + chunk].detach().clone().requires_grad_(True)
        grads, = torch.autograd.grad(deformation_norm(z).sum(), z)
        C += grads.T @ grads
    return C / len(latents)


def subspace_from_outer_product(C: torch.Tensor, explained_variance: float = 0.99,
                                max_coords: int = 16) -> Subspace:
    """Keep the fewest leading eigenvectors that explain `explained_variance` of trace(C), at most
    max_coords (and at least one)."""
    eigenvalues, eigenvectors = torch.linalg.eigh(C.double())
    order = torch.argsort(eigenvalues, descending=True)
    eigenvalues = eigenvalues[order].clamp_min(0.0)
    eigenvectors = eigenvectors[:, order]
    total = float(eigenvalues.sum())
    if total <= 0:
        k_q = 1
    else:
        cumulative = torch.cumsum(eigenvalues, 0) / total
        threshold = torch.tensor(explained_variance, dtype=cumulative.dtype, device=cumulative.device)
        k_q = int(torch.searchsorted(cumulative, threshold)) + 1
    k_q = max(1, min(k_q, int(max_coords), C.shape[0]))
    explained = float(eigenvalues[:k_q].sum()) / total if total > 0 else 1.0
    return Subspace(eigenvectors[:, :k_q].to(C.dtype), eigenvalues.to(C.dtype), explained)


def gaussian_draws(mean: torch.Tensor, num_samples: int, seed: int = 0) -> torch.Tensor:
    """(num_samples, k) draws from N(mean, I), mean (k,); the noise is drawn on the CPU (seeded)."""
    generator = torch.Generator().manual_seed(int(seed))
    noise = torch.randn(num_samples, mean.numel(), generator=generator, dtype=mean.dtype, device="cpu")
    return mean.reshape(1, -1) + noise.to(mean.device)


def active_subspace(deformation_norm: Callable[[torch.Tensor], torch.Tensor], latents: torch.Tensor,
                    explained_variance: float = 0.99, max_coords: int = 16) -> Subspace:
    """The active subspace of deformation_norm over prior draws latents (S, k): gaussian_draws for
    the N(mu, I) prior of docs/architecture.md §7, or the posterior bank's draws (instance.py)."""
    C = gradient_outer_product(deformation_norm, latents)
    return subspace_from_outer_product(C, explained_variance, max_coords)
