"""Right-hand side of the Euler–Lagrange equations in generalised coordinates q.

    M(q) qddot = - J^T diag(m) d2x[qdot, qdot] - dV/dq - c M qdot + sum_forces J_c^T f(t, q, qdot)

solved with M + eps I (eps relative to the mean diagonal of M). One evaluation of the map (`expand`)
gives x, J and d2x; M, the potential gradient and every contact force reuse that J.
State y (2 k_q + 2,): q, qdot, then two bookkeeping integrals: W, the work done by the external
forces (J), and E_d, the energy removed by damping (J); T + V - W + E_d stays constant.
"""
from dataclasses import dataclass, field
from typing import Callable, Sequence, Tuple

import torch

from neurok_ros.dynamics.external_forces import external_generalised_force
from neurok_ros.dynamics.kinematic_map import KinematicMap, expand
from neurok_ros.dynamics.mass_matrix import mass_matrix, regularise
from neurok_ros.dynamics.potentials import Potentials, coordinate_gradient, point_gradient


@dataclass
class LagrangianSystem:
    """The map, its energies and its forces.

    kmap: the kinematic map and masses; potentials: gravity, elastic, barrier; damping: c in 1/s
    (D = c M); forces: PushForce / DragForce objects; tikhonov: relative regulariser of M in solves.
    """

    kmap: KinematicMap
    potentials: Potentials = field(default_factory=Potentials)
    damping: float = 0.0
    forces: Sequence = ()
    tikhonov: float = 1e-6

    @property
    def num_coords(self) -> int:
        return self.kmap.num_coords


def pack_state(q: torch.Tensor, qdot: torch.Tensor) -> torch.Tensor:
    """y (2 k_q + 2,) from q and qdot (k_q,), with zero work and dissipation."""
    return torch.cat([q, qdot, q.new_zeros(2)])


def unpack_state(y: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(..., 2k+2) -> q (..., k), qdot (..., k), work (...), dissipated (...)."""
    return y[..., :k], y[..., k:2 * k], y[..., 2 * k], y[..., 2 * k + 1]


def accelerations(system: LagrangianSystem, t, q: torch.Tensor, qdot: torch.Tensor, t_mid: float
                  ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """qddot (k_q,), external power (W) and damping power (W, >= 0) at (t, q, qdot).

    t_mid: midpoint of the current integration segment; picks the branch of piecewise forces.
    """
    kmap = system.kmap
    x, jac, xddot = expand(kmap, q, qdot)
    m = mass_matrix(jac, kmap.masses)
    m_qdot = m @ qdot
    # curvature and potential forces pulled back together: J^T (m d2x[qdot, qdot] + dV/dx) + dV_q/dq
    point_terms = kmap.masses[:, None] * xddot + point_gradient(system.potentials, x, kmap.masses)
    rhs = -(jac.T @ point_terms.reshape(-1)) - coordinate_gradient(system.potentials, q)
    if system.damping:
        rhs = rhs - system.damping * m_qdot
    external = torch.zeros_like(qdot)
    if system.forces:
        external = external_generalised_force(system.forces, t, t_mid, x, jac, qdot)
        rhs = rhs + external
    qddot = torch.linalg.solve(regularise(m, system.tikhonov), rhs)
    return qddot, external @ qdot, system.damping * (qdot @ m_qdot)


def state_derivative(system: LagrangianSystem, t_mid: float
                     ) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """f(t, y) -> dy/dt for torchdiffeq on one segment whose midpoint is t_mid."""
    k = system.num_coords

    def f(t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        q, qdot, _, _ = unpack_state(y, k)
        qddot, p_ext, p_damp = accelerations(system, t, q, qdot, t_mid)
        return torch.cat([qdot, qddot, torch.stack([p_ext, p_damp])])

    return f
