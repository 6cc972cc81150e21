"""A one-coordinate kinematic map that is a polynomial in w = sqrt(|q|) on each side of q = 0.

    x(q) = x_0 + sum_{j=2..d} c_j^(side) w^j,   w = sqrt(|q| / s),   side = sign(q)

This is the form of the bank chart (neurok_ros/simulation/bank_chart.py) with one mode: for a lid
the chart moves the latent by sqrt(|q|) along an offset, the decoder is smooth in the latent, so on
each side x is a smooth function of w; and the decoder is flat at the rest latent, so there is no
w^1 term (for the chart's other powers, x ~ s + s^(1 + 1/p), it is a close fit). An ordinary
polynomial in q smooths the kink at q = 0 (x ~ q + q^1.5) its own way, and the solved motion then
depends on the fit (a lid fell 1.0-1.9 times as far as the exact chart's at 0.3 s for different
degrees and radii). The derivatives are exact:

    dx/dq = side * sum_j (j / 2) c_j w^(j-2) / s
    d2x/dq2 = sum_j (j / 2) ((j - 2) / 2) c_j w^(j-4) / s^2

The j = 3 term of d2x/dq2 is (3/4) c_3 / w: an integrable singularity at q = 0 (a contact that
starts the motion there sees it only for an instant); it is evaluated at w >= W_MIN.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import torch

W_MIN = 1e-3  # floor of w in the second derivative (|q| = 1e-6 s)


def root_powers(w: torch.Tensor, degree: int, shift: int = 0) -> torch.Tensor:
    """(..., ) -> (..., degree - 1): w^(j - shift) for j = 2 .. degree."""
    exponents = torch.arange(2, degree + 1, dtype=w.dtype, device=w.device) - shift
    return w[..., None] ** exponents


@dataclass
class RootPolynomialMap:
    """x(q) for n points and one coordinate: rest (3n,) x_0 metres; positive, negative (d - 1, 3n):
    c_2 .. c_d on each side, metres; scale s (q units); fit_rms: the fit's RMS residual, metres;
    even_only: the odd c_j were held at zero by the fit (fit_root_polynomial_map)."""

    rest: torch.Tensor
    positive: torch.Tensor
    negative: torch.Tensor
    scale: float
    num_points: int
    fit_rms: float = 0.0
    even_only: bool = False

    num_coords = 1
    kink = 0  # the coordinate across whose zero the map is not smooth (dormand_prince lands on it)

    @property
    def degree(self) -> int:
        """The largest power of w (d); the largest power of q is d / 2."""
        return int(self.positive.shape[0]) + 1

    def _side(self, q: torch.Tensor, qdot: torch.Tensor | None = None
              ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For q (...,): sign (...,), w (...,) and the side's coefficients (..., d - 1, 3n). At q = 0
        the side is the one qdot (...,) moves into (the derivatives there are one-sided)."""
        q = q.to(self.rest.dtype)
        at_rest = q == 0 if qdot is None else (q == 0) & (qdot >= 0)
        positive = (q > 0) | at_rest
        sign = torch.where(positive, 1.0, -1.0).to(q.dtype)
        coefficients = torch.where(positive[..., None, None], self.positive, self.negative)
        return sign, torch.sqrt(q.abs() / self.scale), coefficients

    def positions(self, q: torch.Tensor) -> torch.Tensor:
        """(..., 1) -> (..., n, 3) metres."""
        _, w, c = self._side(q[..., 0])
        x = self.rest + torch.einsum("...j,...jp->...p", root_powers(w, self.degree), c)
        return x.reshape(*q.shape[:-1], self.num_points, 3)

    def _slope(self, sign: torch.Tensor, w: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        j = torch.arange(2, self.degree + 1, dtype=w.dtype, device=w.device)
        return (sign[..., None] * torch.einsum("...j,...jp->...p", root_powers(w, self.degree, 2) * j / 2, c)
                / self.scale)

    def expand(self, q: torch.Tensor, qdot: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (n, 3), J (3n, 1) and d2x/dq2[qdot, qdot] (n, 3) at q, qdot (1,)."""
        sign, w, c = self._side(q[0], qdot[0])
        j = torch.arange(2, self.degree + 1, dtype=w.dtype, device=w.device)
        x = self.rest + root_powers(w, self.degree) @ c
        jac = self._slope(sign, w, c)
        curvature = (root_powers(w.clamp_min(W_MIN), self.degree, 4) * (j / 2) * ((j - 2) / 2)) @ c / self.scale ** 2
        n = self.num_points
        return x.reshape(n, 3), jac[:, None], (curvature * qdot[0].to(w.dtype) ** 2).reshape(n, 3)

    def positions_and_velocities(self, q: torch.Tensor, qdot: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """x (T, n, 3) metres and J qdot (T, n, 3) m/s for q, qdot (T, 1)."""
        sign, w, c = self._side(q[:, 0], qdot[:, 0])
        velocity = self._slope(sign, w, c) * qdot.to(w.dtype)
        return self.positions(q), velocity.reshape(len(q), self.num_points, 3)


def fit_root_polynomial_map(q: torch.Tensor, x: torch.Tensor, degree: int, scale: float, device=None,
                            even_only: bool = False) -> RootPolynomialMap:
    """Least squares on each side to samples q (S, 1), x (S, n, 3) metres, with x_0 = x at the
    sample q = 0 (which must be present). degree: d >= 2, the largest power of w = sqrt(|q| / scale).
    Each side needs at least d - 1 samples other than q = 0; a side with none (a mode that does not
    close, sampled only on one side) raises ValueError. even_only: the odd powers of w are zero, so
    each side is an ordinary polynomial in |q| (a map smooth on each side, kinked only at q = 0)."""
    if degree < 2:
        raise ValueError(f"degree must be at least 2, got {degree}")
    q64 = q.detach().double().cpu()[:, 0]
    x64 = x.detach().double().cpu().reshape(len(q64), -1)
    at_rest = q64 == 0
    if not bool(at_rest.any()):
        raise ValueError("the samples must include q = 0")
    rest = x64[at_rest][0]
    sides, squared = [], 0.0
    for chosen in (q64 > 0, q64 < 0):
        if int(chosen.sum()) < degree - 1:
            raise ValueError(f"{int(chosen.sum())} samples on one side cannot fit {degree - 1} coefficients")
        design = root_powers(torch.sqrt(q64[chosen].abs() / scale), degree)
        used = torch.arange(2, degree + 1) % 2 == 0 if even_only else torch.ones(degree - 1, dtype=torch.bool)
        target = x64[chosen] - rest
        coefficients = torch.zeros(degree - 1, target.shape[1], dtype=target.dtype)
        coefficients[used] = torch.linalg.lstsq(design[:, used], target, driver="gelsd").solution
        sides.append(coefficients)
        squared += float((design @ coefficients - target).pow(2).sum())
    residual = (3.0 * squared / (len(q64) * x64.shape[1])) ** 0.5
    device = x.device if device is None else device
    return RootPolynomialMap(rest.to(device), sides[0].to(device), sides[1].to(device), float(scale), x.shape[1],
                             residual, even_only)


def side_speeds(rmap: RootPolynomialMap, masses: torch.Tensor) -> tuple[float, float]:
    """|J(0+)|_M and |J(0-)|_M, sqrt(kg) m per unit q: how fast each side starts (masses (n,) kg)."""
    weights = masses.to(rmap.rest.dtype).repeat_interleave(3)
    return tuple(float((weights * side[0].square()).sum().sqrt()) / rmap.scale
                 for side in (rmap.positive, rmap.negative))


def rescale_negative(rmap: RootPolynomialMap, factor: float) -> RootPolynomialMap:
    """The map whose negative side at q is rmap's at factor * q (c_j -> c_j factor^(j / 2))."""
    powers = torch.arange(2, rmap.degree + 1, dtype=rmap.rest.dtype, device=rmap.rest.device) / 2
    negative = rmap.negative * (float(factor) ** powers)[:, None]
    return RootPolynomialMap(rmap.rest, rmap.positive, negative, rmap.scale, rmap.num_points, rmap.fit_rms,
                             rmap.even_only)


def root_kinematic_map(rmap: RootPolynomialMap, masses: torch.Tensor):
    """The RootPolynomialMap as a KinematicMap (derivatives "analytic") with point masses (n,) kg."""
    from neurok_ros.dynamics.kinematic_map import KinematicMap

    return KinematicMap(rmap.positions, masses, 1, rmap.positions, analytic=rmap)
