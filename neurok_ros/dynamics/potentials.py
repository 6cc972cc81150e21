"""Potential energies V(q) and their gradients dV/dq, pulled back through J^T.

Units: positions metres, masses kg, gravity m/s^2, energies joules. The gradients use the Jacobian
the right-hand side already has, so no extra pass through the map is needed.
- gravity:  V = -sum_i m_i g . x_i, g the gravitational acceleration (e.g. (0, 0, -9.81)); so V
            grows with height. dV/dq = -J^T (m g).
- springs:  V = 1/2 sum_i s_i m_i |x_i(q) - x_i(q_rest)|^2 with s_i = k_s + k_pin w_i, k_s in 1/s^2
            (a per-kg stiffness toward the rest positions, for every point: the latent chart's anchor
            spring) plus the pin stiffness k_pin (1/s^2) on the pinned points (w_i = 1: held at their
            rest positions, e.g. a cloth's edge). dV/dq = J^T (s m (x - x_rest)).
- barrier:  V = 1/2 k_p |d + A q|^2 = 1/2 k_p |z - mu|^2 with z = mu + d + A q, A (k, k_q) (identity
            when absent) and d (k,) the latent offset of q = 0 from the prior mean (zero when absent:
            z = mu + A q; a learned instance has z = z_rest + A q, so d = z_rest - mu), k_p in J per
            unit z^2. dV/dq = k_p A^T (d + A q).
- extra:    any term written in q alone, an object with energy(q (..., k_q)) -> (...) J and
            gradient(q (k_q,)) -> (k_q,) (simulation/free_body.CarriedSpring: the strain energy).
"""
from dataclasses import dataclass
from typing import Optional, Sequence

import torch


@dataclass
class Potentials:
    """Parameters of V. gravity (3,) m/s^2; stiffness k_s 1/s^2 with rest positions (n, 3) metres;
    barrier k_p with basis (k, k_q) or None for the identity, and latent_offset d (k,) = z(q=0) - mu
    or None for zero; extra: a term written in q with energy(q) and gradient(q), or None."""

    gravity: Sequence[float] = (0.0, 0.0, 0.0)
    stiffness: float = 0.0
    rest_positions: Optional[torch.Tensor] = None
    pin_stiffness: float = 0.0
    pinned: Optional[torch.Tensor] = None
    barrier: float = 0.0
    basis: Optional[torch.Tensor] = None
    latent_offset: Optional[torch.Tensor] = None
    extra: Optional[object] = None

    def __post_init__(self):
        self.gravity = tuple(float(g) for g in self.gravity)
        if len(self.gravity) != 3:
            raise ValueError(f"gravity must have 3 components, got {len(self.gravity)}")
        if (self.stiffness or self.pin_stiffness) and self.rest_positions is None:
            raise ValueError("an elastic or pin stiffness needs rest_positions (n, 3)")
        if self.pin_stiffness and self.pinned is None:
            raise ValueError("a pin stiffness needs the pinned points (n,)")


def spring_constants(potentials: Potentials, like: torch.Tensor) -> Optional[torch.Tensor]:
    """s (n,) 1/s^2: k_s + k_pin w_i per point, or None without elastic and pin terms."""
    if not potentials.pin_stiffness:
        if not potentials.stiffness:
            return None
        return torch.full(like.shape[-2:-1], float(potentials.stiffness), dtype=like.dtype, device=like.device)
    pinned = potentials.pinned.to(like.dtype).to(like.device)
    return potentials.stiffness + potentials.pin_stiffness * pinned


def _gravity_vector(potentials: Potentials, like: torch.Tensor) -> torch.Tensor:
    cached = potentials.__dict__.get("_gravity_tensor")
    if cached is None or cached.dtype != like.dtype or cached.device != like.device:
        cached = torch.as_tensor(potentials.gravity, dtype=like.dtype, device=like.device)
        potentials.__dict__["_gravity_tensor"] = cached  # the right-hand side asks for it every call
    return cached


def _latent_offset(potentials: Potentials, q: torch.Tensor) -> torch.Tensor:
    """d + A q (..., k): the offset z - mu; with a basis, q's leading coordinates are the latent ones
    (a carrier's rigid coordinates follow them)."""
    z = q if potentials.basis is None else q[..., :potentials.basis.shape[1]] @ potentials.basis.T
    if potentials.latent_offset is not None:
        z = z + potentials.latent_offset.to(z.dtype).to(z.device)
    return z


def potential_energy(potentials: Potentials, x: torch.Tensor, q: torch.Tensor,
                     masses: torch.Tensor) -> torch.Tensor:
    """V, joules. x: (..., n, 3) metres; q: (..., k_q); masses (n,) kg. Returns shape (...)."""
    v = torch.zeros(x.shape[:-2], dtype=x.dtype, device=x.device)
    if any(potentials.gravity):
        v = v - torch.einsum("n,...nd,d->...", masses, x, _gravity_vector(potentials, x))
    springs = spring_constants(potentials, x)
    if springs is not None:
        d = x - potentials.rest_positions
        v = v + 0.5 * torch.einsum("n,...nd,...nd->...", springs * masses, d, d)
    if potentials.barrier:
        z = _latent_offset(potentials, q)
        v = v + 0.5 * potentials.barrier * (z * z).sum(-1)
    if potentials.extra is not None:
        v = v + potentials.extra.energy(q)
    return v


def point_gradient(potentials: Potentials, x: torch.Tensor, masses: torch.Tensor) -> torch.Tensor:
    """dV/dx (n, 3), newtons (the negative point forces) of gravity and the elastic term."""
    gradient = torch.zeros_like(x)
    if any(potentials.gravity):
        gradient = gradient - masses[:, None] * _gravity_vector(potentials, x)
    springs = spring_constants(potentials, x)
    if springs is not None:
        gradient = gradient + (springs * masses)[:, None] * (x - potentials.rest_positions)
    return gradient


def coordinate_gradient(potentials: Potentials, q: torch.Tensor) -> torch.Tensor | float:
    """dV/dq (k_q,) of the terms written in q (the barrier and the extra term), or 0.0 without them."""
    gradient = 0.0
    if potentials.barrier:
        z = _latent_offset(potentials, q)
        if potentials.basis is None:
            gradient = potentials.barrier * z
        else:
            gradient = torch.zeros_like(q)
            gradient[:potentials.basis.shape[1]] = potentials.barrier * (potentials.basis.T @ z)
    if potentials.extra is not None:
        gradient = gradient + potentials.extra.gradient(q)
    return gradient


def potential_gradient(potentials: Potentials, x: torch.Tensor, jacobian: torch.Tensor, q: torch.Tensor,
                       masses: torch.Tensor) -> torch.Tensor:
    """dV/dq (k_q,), joules per unit q. x: (n, 3); jacobian: (3n, k_q); q: (k_q,); masses: (n,)."""
    return jacobian.T @ point_gradient(potentials, x, masses).reshape(-1) + coordinate_gradient(potentials, q)
