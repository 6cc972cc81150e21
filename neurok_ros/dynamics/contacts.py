"""Contacts: points on the object, each a barycentric blend of simulation points.

A contact c sits at x_c = sum_k w_ck x_{i_ck}; its Jacobian rows are the same blend of the rows
of J, and a point force f_c enters the equations as J_c^T f_c.
"""
from dataclasses import dataclass
from typing import Tuple

import torch


@dataclass
class Contacts:
    """indices: (C, K) int64 simulation-point indices; weights: (C, K) blend weights summing to 1."""

    indices: torch.Tensor
    weights: torch.Tensor

    def __post_init__(self):
        self.indices = torch.as_tensor(self.indices, dtype=torch.long)
        if self.indices.ndim == 1:
            self.indices = self.indices[:, None]
        self.weights = torch.as_tensor(self.weights)
        if self.weights.ndim == 1 and self.indices.shape[1] == 1:
            self.weights = self.weights[:, None]
        if self.weights.shape != self.indices.shape:
            raise ValueError(f"weights {tuple(self.weights.shape)} must match indices "
                             f"{tuple(self.indices.shape)}")

    @property
    def num_contacts(self) -> int:
        return int(self.indices.shape[0])


def at_points(indices) -> Contacts:
    """Contacts at single simulation points, (C,) indices."""
    idx = torch.as_tensor(indices, dtype=torch.long).reshape(-1, 1)
    return Contacts(idx, torch.ones(idx.shape, dtype=torch.float64))


def nearest(points: torch.Tensor, targets: torch.Tensor, k: int = 1) -> Tuple[Contacts, torch.Tensor]:
    """Contacts at the k simulation points nearest each target, inverse-distance blended.

    points: (n, 3) metres; targets: (C, 3) metres. Returns the contacts and the distance (C,)
    from each target to its nearest point (for a snapping tolerance).
    """
    dist = torch.cdist(targets.to(points.dtype), points)
    d, idx = torch.topk(dist, k, dim=1, largest=False)
    if k == 1:
        w = torch.ones_like(d)
    else:
        inv = 1.0 / torch.clamp(d, min=1e-12)
        exact = d <= 1e-12
        inv = torch.where(exact.any(1, keepdim=True), exact.to(d.dtype), inv)
        w = inv / inv.sum(1, keepdim=True)
    return Contacts(idx, w), d[:, 0]


def contact_positions(contacts: Contacts, x: torch.Tensor) -> torch.Tensor:
    """x_c (..., C, 3) from point positions x (..., n, 3)."""
    w = contacts.weights.to(x.dtype).to(x.device)
    return torch.einsum("...ckd,ck->...cd", x[..., contacts.indices, :], w)


def contact_jacobian(contacts: Contacts, jacobian: torch.Tensor) -> torch.Tensor:
    """J_c (3C, k_q) from J (3n, k_q): the blended rows of the contact points."""
    k = jacobian.shape[1]
    rows = jacobian.reshape(-1, 3, k)[contacts.indices]
    w = contacts.weights.to(jacobian.dtype).to(jacobian.device)
    return torch.einsum("ckdj,ck->cdj", rows, w).reshape(-1, k)


def generalised_force(contacts: Contacts, jacobian: torch.Tensor, forces: torch.Tensor) -> torch.Tensor:
    """J_c^T f (k_q,), f: (C, 3) newtons at the contacts."""
    return contact_jacobian(contacts, jacobian).T @ forces.reshape(-1)
