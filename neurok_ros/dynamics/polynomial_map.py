"""A kinematic map that is a polynomial in q, with exact derivatives in one matrix product.

    x(q) = sum_j c_j phi_j(q / s),   phi_j(u) = prod_i u_i^(E_ji),   sum_i E_ji <= degree

Fitted by least squares to samples (q, x(q)) of another map (the learned decoder: see
neurok_ros/simulation/surrogate.py), it stands in for that map inside the Euler-Lagrange solver: x,
the Jacobian J and the second derivative d2x[qdot, qdot] are all phi(q / s) times one precomputed
coefficient stack, so a right-hand side costs a (P,) x (P, (1 + k + k(k+1)/2) 3n) product instead of
2 k + 3 decoder passes. The derivative coefficients are exact (monomials differentiate into
monomials of the same basis), so the dynamics see a smooth map with no difference noise.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Tuple

import torch

if TYPE_CHECKING:  # for the annotation only; polynomial_kinematic_map imports it when called
    from neurok_ros.dynamics.kinematic_map import KinematicMap


def monomial_exponents(num_coords: int, degree: int) -> torch.Tensor:
    """(P, k) int64: every exponent vector with total degree <= `degree`, by increasing degree."""
    if num_coords < 1 or degree < 0:
        raise ValueError(f"need num_coords >= 1 and degree >= 0, got {num_coords}, {degree}")
    rows = [e for d in range(degree + 1) for e in itertools.product(range(d + 1), repeat=num_coords)
            if sum(e) == d]
    return torch.tensor(rows, dtype=torch.long)


def monomials(u: torch.Tensor, exponents: torch.Tensor) -> torch.Tensor:
    """phi(u): (..., k) -> (..., P) for exponents (P, k) (integer or float, on u's device); 0^0 = 1."""
    return torch.prod(u[..., None, :] ** exponents, dim=-1)


def _derivative_operators(exponents: torch.Tensor) -> torch.Tensor:
    """D (k, P, P) with d phi / du_i = phi @ D_i^T ... expressed on coefficients: C_i = D_i C.

    Row p of D_i collects the monomials j whose derivative along u_i is E_ji * phi_p, i.e.
    E_j - e_i = E_p."""
    count, k = exponents.shape
    index = {tuple(e.tolist()): p for p, e in enumerate(exponents)}
    ops = torch.zeros(k, count, count, dtype=torch.float64)
    for j, e in enumerate(exponents.tolist()):
        for i in range(k):
            if e[i] > 0:
                lowered = list(e)
                lowered[i] -= 1
                ops[i, index[tuple(lowered)], j] = float(e[i])
    return ops


@dataclass
class PolynomialMap:
    """x(q) for n points: exponents (P, k); scale s (q units: u = q / s); stack (P, (1 + k + h) 3n)
    holding, side by side, the coefficients of x, of dx/dq_i (i = 0..k-1) and of d2x/dq_i dq_l for
    the h = k(k+1)/2 pairs i <= l (row-major), in metres per unit q^order; fit_rms: the
    least-squares residual of the fit, metres (RMS over samples and points)."""

    exponents: torch.Tensor
    scale: float
    stack: torch.Tensor
    num_points: int
    fit_rms: float = 0.0

    @property
    def num_coords(self) -> int:
        return int(self.exponents.shape[1])

    @property
    def degree(self) -> int:
        """The largest total exponent."""
        return int(self.exponents.sum(1).max())

    def __post_init__(self):
        self._powers = self.exponents.to(self.stack.device, self.stack.dtype)  # float powers: the fast pow
        rows, cols = torch.triu_indices(self.num_coords, self.num_coords)
        self._pairs = (rows.to(self.stack.device), cols.to(self.stack.device))
        # d2x[v, v] = sum_{i <= l} (2 - [i = l]) v_i v_l d2x/dq_i dq_l
        self._pair_weight = (2.0 - (rows == cols).to(self.stack.dtype)).to(self.stack.device)

    @property
    def pairs(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """(rows, cols) (h,) int64: the coordinate pairs i <= l of the second-derivative blocks."""
        return self._pairs

    @property
    def pair_weight(self) -> torch.Tensor:
        """(h,): 2 for i < l, 1 for i = l, so that d2x[v, v] = sum_pairs weight v_i v_l d2x/dq_i dq_l."""
        return self._pair_weight

    def _blocks(self, q: torch.Tensor, count: int) -> torch.Tensor:
        """The first `count` blocks (x, then dx/dq_i, then the pairs) at q (..., k): (..., count, n, 3)."""
        phi = monomials(q.to(self.stack.dtype) / self.scale, self._powers)
        width = 3 * self.num_points
        return (phi @ self.stack[:, :count * width]).reshape(*q.shape[:-1], count, self.num_points, 3)

    def positions(self, q: torch.Tensor) -> torch.Tensor:
        """(..., k) -> (..., n, 3) metres."""
        width = 3 * self.num_points
        phi = monomials(q.to(self.stack.dtype) / self.scale, self._powers)
        return (phi @ self.stack[:, :width]).reshape(*q.shape[:-1], self.num_points, 3)

    def expand(self, q: torch.Tensor, qdot: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (n, 3), J (3n, k) and d2x/dq2[qdot, qdot] (n, 3) at q, qdot (k,)."""
        k = self.num_coords
        blocks = self._blocks(q, 1 + k + len(self._pair_weight))
        jac = blocks[1:1 + k].reshape(k, -1).T
        weights = self._pair_weight * (qdot[:, None] * qdot[None, :])[self._pairs]
        return blocks[0], jac, (weights @ blocks[1 + k:].reshape(len(weights), -1)).reshape(self.num_points, 3)

    def positions_and_velocities(self, q: torch.Tensor, qdot: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """x (T, n, 3) metres and J qdot (T, n, 3) m/s for q, qdot (T, k)."""
        k = self.num_coords
        blocks = self._blocks(q, 1 + k)
        return blocks[:, 0], torch.einsum("ti,tind->tnd", qdot.to(self.stack.dtype), blocks[:, 1:1 + k])


def fit_polynomial_map(q: torch.Tensor, x: torch.Tensor, degree: int, scale: Optional[float] = None,
                       weights: Optional[torch.Tensor] = None, device=None) -> PolynomialMap:
    """Least-squares fit to samples q (S, k), x (S, n, 3) metres; weights (S,) >= 0 per sample.

    scale: u = q / scale (None: the largest |q| of the samples) keeps the monomials of order one, so
    the normal equations stay well conditioned. Solved in float64 on the CPU; the stack then lives on
    `device` (None: x's device). Raises ValueError when there are fewer samples than monomials."""
    exponents = monomial_exponents(q.shape[1], degree)
    if q.shape[0] < exponents.shape[0]:
        raise ValueError(f"{q.shape[0]} samples cannot fit {exponents.shape[0]} monomials (degree {degree})")
    q64 = q.detach().double().cpu()
    x64 = x.detach().double().cpu().reshape(q.shape[0], -1)
    if scale is None:
        scale = float(torch.linalg.vector_norm(q64, dim=1).max()) or 1.0
    design = monomials(q64 / scale, exponents)
    if weights is not None:
        root = weights.detach().double().cpu().sqrt()[:, None]
        coefficients = torch.linalg.lstsq(design * root, x64 * root, driver="gelsd").solution
    else:
        coefficients = torch.linalg.lstsq(design, x64, driver="gelsd").solution
    residual = float((design @ coefficients - x64).pow(2).mean().mul(3.0).sqrt())
    ops = _derivative_operators(exponents)
    first = [ops[i] @ coefficients / scale for i in range(ops.shape[0])]
    second = [ops[j] @ first[i] / scale for i in range(ops.shape[0]) for j in range(i, ops.shape[0])]
    stack = torch.cat([coefficients, *first, *second], dim=1)
    return PolynomialMap(exponents, float(scale), stack.to(x.device if device is None else device), x.shape[1],
                         residual)


def polynomial_kinematic_map(pmap: PolynomialMap, masses: torch.Tensor) -> "KinematicMap":
    """The PolynomialMap as a KinematicMap (derivatives "analytic") with point masses (n,) kg."""
    from neurok_ros.dynamics.kinematic_map import KinematicMap

    return KinematicMap(pmap.positions, masses, pmap.num_coords, pmap.positions, analytic=pmap)
