"""Reference form of the velocity term: explicit Christoffel symbols of the first kind.

Gamma[i, j, l] = 1/2 (dM_ij/dq_l + dM_il/dq_j - dM_jl/dq_i), and the generalised force
c_i = sum_jl Gamma[i, j, l] qdot_j qdot_l. Builds the (k_q, k_q, k_q) tensor from dM/dq by nested
jacfwd; O(k_q^2) map derivatives, so it is only used to verify the AD form (curvature.py).
"""
from typing import Callable

import torch
from torch.func import jacfwd

from neurok_ros.dynamics.mass_matrix import mass_matrix


def mass_matrix_derivative(positions: Callable[[torch.Tensor], torch.Tensor], masses: torch.Tensor,
                           q: torch.Tensor) -> torch.Tensor:
    """dM/dq (k_q, k_q, k_q) with [i, j, l] = dM_ij / dq_l. positions: (k_q,) -> (n, 3)."""
    k = q.shape[0]

    def mass_of(p: torch.Tensor) -> torch.Tensor:
        return mass_matrix(jacfwd(positions)(p).reshape(-1, k), masses)

    return jacfwd(mass_of)(q)


def christoffel_symbols(dm: torch.Tensor) -> torch.Tensor:
    """Gamma (k_q, k_q, k_q) of the first kind from dM/dq indexed [i, j, l] = dM_ij / dq_l."""
    return 0.5 * (dm + dm.transpose(1, 2) - dm.permute(2, 0, 1))


def christoffel_force(gamma: torch.Tensor, qdot: torch.Tensor) -> torch.Tensor:
    """c_i = Gamma[i, j, l] qdot_j qdot_l, (k_q,)."""
    return torch.einsum("ijl,j,l->i", gamma, qdot, qdot)


def curvature_term_christoffel(positions: Callable[[torch.Tensor], torch.Tensor], masses: torch.Tensor,
                               q: torch.Tensor, qdot: torch.Tensor) -> torch.Tensor:
    """The velocity term from scratch by the explicit Christoffel form, (k_q,)."""
    return christoffel_force(christoffel_symbols(mass_matrix_derivative(positions, masses, q)), qdot)
