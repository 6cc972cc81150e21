"""A kinked mode plus linear deformation coordinates: the one-mode bank chart with contact compliance.

    x(q) = R(q_0) + L (q_1 .. q_r),   R a RootPolynomialMap (kinked at q_0 = 0), L (3n, r) metres per unit q

The bank chart's one mode moves a lid or a door like its hinge does, and nothing else. A contact
velocity that the mode cannot follow exactly (the learned door's edge moves 5-17 degrees off the
push; a horizontal push on a tilted lid) is then left as a residual. The r deformation coordinates
are small motions of the surface about the rest pose (the active subspace's principal directions,
linearised at q = 0): stiff elastic deformation that takes up what the mode cannot follow, and
vibrates about the rest shape afterwards. The map is the sum, so its derivatives are each part's:

    J = [dR/dq_0, L],   d2x[qdot, qdot] = d2R/dq_0^2 qdot_0^2

`without_mode` removes from L whatever the mode's own motion contains, so that the two share no
kinetic energy. Their energy is a potential of the coordinates (Potentials.coordinate_stiffness, built by
`deformation_stiffness`): 1/2 k_e |L e|_M^2, the elastic energy of the deformation they make.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import torch

from neurok_ros.dynamics.root_polynomial_map import RootPolynomialMap

DEFORMATION_ATOL = 0.01  # the solver's absolute tolerance on deformation coordinates, relative to atol


@dataclass
class RootPlusLinearMap:
    """root: the kinked mode's map (coordinate 0); linear (3n, r): the deformation coordinates'
    displacement per unit q, metres."""

    root: RootPolynomialMap
    linear: torch.Tensor

    kink = 0  # the coordinate across whose zero the map is not smooth (dormand_prince lands on it)

    @property
    def atol_scales(self) -> Tuple[float, ...]:
        """Per coordinate, the factor on the solver's absolute tolerance: DEFORMATION_ATOL on the
        deformation coordinates, which move millimetres where the mode moves decimetres with the same
        inertia per unit (at the mode's atol their energy drifted by a percent of what they exchange)."""
        return (1.0,) + (DEFORMATION_ATOL,) * int(self.linear.shape[1])

    @property
    def num_coords(self) -> int:
        return 1 + int(self.linear.shape[1])

    @property
    def num_points(self) -> int:
        return self.root.num_points

    @property
    def degree(self) -> int:
        return self.root.degree

    @property
    def scale(self) -> float:
        return self.root.scale

    @property
    def fit_rms(self) -> float:
        return self.root.fit_rms

    @property
    def even_only(self) -> bool:
        return self.root.even_only

    def _deformation(self, e: torch.Tensor) -> torch.Tensor:
        """(..., r) -> (..., n, 3) metres."""
        return (e.to(self.linear.dtype) @ self.linear.T).reshape(*e.shape[:-1], self.num_points, 3)

    def positions(self, q: torch.Tensor) -> torch.Tensor:
        """(..., 1 + r) -> (..., n, 3) metres."""
        return self.root.positions(q[..., :1]) + self._deformation(q[..., 1:])

    def expand(self, q: torch.Tensor, qdot: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (n, 3), J (3n, 1 + r) and d2x/dq2[qdot, qdot] (n, 3) at q, qdot (1 + r,)."""
        x, jac, curvature = self.root.expand(q[:1], qdot[:1])
        return x + self._deformation(q[1:]), torch.cat([jac, self.linear.to(jac.dtype)], dim=1), curvature

    def positions_and_velocities(self, q: torch.Tensor, qdot: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """x (T, n, 3) metres and J qdot (T, n, 3) m/s for q, qdot (T, 1 + r)."""
        x, velocity = self.root.positions_and_velocities(q[:, :1], qdot[:, :1])
        return x + self._deformation(q[:, 1:]), velocity + self._deformation(qdot[:, 1:])


def without_mode(hmap: RootPlusLinearMap, masses: torch.Tensor) -> RootPlusLinearMap:
    """The map with its deformation made M-orthogonal to every shape the mode passes through, and
    M-orthogonal within itself with the mode's inertia at rest; masses (n,) kg.

    1. L - U (U^T M U)^+ U^T M L, U (3n, 2 (d - 1)) the mode's coefficients c_j on both sides (every
       R(q_0) - x_0 lies in their span). The mode's velocity J_0 = dR/dq_0 is then M-orthogonal to L
       wherever the mode is, so the kinetic energy has no cross term: the mode moves as it would
       alone, with no jump of M across the kink, and the elastic term's cross term
       k_s (R - x_0)^T M L e vanishes too.
    2. L V diag(sqrt(m_0 / lambda)) with L^T M L = V diag(lambda) V^T and m_0 = |J_0(0+)|_M^2: the
       coordinates' mass matrix is m_0 I, the mode's own scale (the solver's regulariser, relative to
       the mean of M's diagonal, then perturbs none of them more than the others). Directions that
       move nothing (lambda < 1e-12 of the largest) get a zero column."""
    span = torch.cat([hmap.root.positive, hmap.root.negative]).T.to(hmap.linear.dtype)  # (3n, 2 (d - 1))
    weights = masses.to(span.dtype).repeat_interleave(3)[:, None]
    gram = span.T @ (weights * span)
    linear = hmap.linear - span @ (torch.linalg.pinv(gram, hermitian=True) @ (span.T @ (weights * hmap.linear)))
    values, vectors = torch.linalg.eigh(linear.T @ (weights * linear))
    mode_inertia = float((weights[:, 0] * hmap.root.positive[0].to(span.dtype).square()).sum()) / hmap.scale ** 2
    moves = values > 1e-12 * float(values.max().clamp_min(1e-300))
    scale = torch.where(moves, (mode_inertia / values.clamp_min(1e-300)).sqrt(), torch.zeros_like(values))
    return RootPlusLinearMap(hmap.root, linear @ (vectors * scale))


def deformation_stiffness(linear: torch.Tensor, masses: torch.Tensor, stiffness: float, first: int = 1) -> torch.Tensor:
    """K (first + r, first + r), J per unit q^2: k_e L^T diag(m) L on the deformation coordinates
    (those from `first` on), zero on the others; linear (3n, r) metres per unit q, masses (n,) kg,
    stiffness k_e 1/s^2 (per kg, as the elastic term's). 1/2 q^T K q is the elastic energy of the
    deformation L e, so each coordinate alone vibrates at sqrt(k_e) rad/s."""
    r = int(linear.shape[1])
    weights = masses.to(linear.dtype).repeat_interleave(3)
    matrix = torch.zeros(first + r, first + r, dtype=linear.dtype, device=linear.device)
    matrix[first:, first:] = float(stiffness) * (linear.T @ (weights[:, None] * linear))
    return matrix


def root_plus_linear_kinematic_map(hmap: RootPlusLinearMap, masses: torch.Tensor):
    """The map as a KinematicMap (derivatives "analytic") with point masses (n,) kg."""
    from neurok_ros.dynamics.kinematic_map import KinematicMap

    return KinematicMap(hmap.positions, masses, hmap.num_coords, hmap.positions, analytic=hmap)
