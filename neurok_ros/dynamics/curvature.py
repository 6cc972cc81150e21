"""Velocity-dependent (curvature) term of the Euler–Lagrange equations, without the k_q^3 tensor.

With x(q) the (n, 3) point positions and M = J^T diag(m) J, the Coriolis/centrifugal generalised
force is J^T diag(m) d2x/dq2[qdot, qdot]: the second directional derivative of the map along qdot,
weighted by the point masses and pulled back by the Jacobian. Two ways to get d2x[qdot, qdot]:
nested forward-mode AD (torch.func.jvp of jvp; the map must support forward AD, so attention is
written as explicit matmul + softmax), or a second central difference along qdot.
"""
from typing import Callable, Tuple

import torch
from torch.func import jvp

Positions = Callable[[torch.Tensor], torch.Tensor]


def second_derivative_ad(positions: Positions, q: torch.Tensor, qdot: torch.Tensor
                         ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x(q), J qdot and d2x/dq2[qdot, qdot] by jvp of jvp.

    q, qdot: (k_q,); returns three (n, 3) tensors: metres, m/s and m/s^2 (for qdot in 1/s).
    """
    def velocity(p: torch.Tensor):
        return jvp(positions, (p,), (qdot,))

    (x, xdot), (_, xddot) = jvp(velocity, (q,), (qdot,))
    return x, xdot, xddot


def second_difference(x_plus: torch.Tensor, x_centre: torch.Tensor, x_minus: torch.Tensor,
                      step: float, speed: torch.Tensor) -> torch.Tensor:
    """d2x[qdot, qdot] from positions at q + h u, q, q - h u with u = qdot / |qdot| (unit direction).

    x_*: (n, 3) metres; step: h in q units; speed: |qdot| (scalar tensor). Returns (n, 3).
    """
    return (x_plus - 2.0 * x_centre + x_minus) * (speed * speed / (step * step))


def direction_and_speed(qdot: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Unit direction u (k_q,) and speed |qdot| (scalar); u = 0 when qdot = 0."""
    speed = torch.linalg.vector_norm(qdot)
    tiny = torch.finfo(qdot.dtype).tiny
    return qdot / torch.clamp(speed, min=tiny), speed


def second_derivative_fd(positions_batch: Callable[[torch.Tensor], torch.Tensor], q: torch.Tensor,
                         qdot: torch.Tensor, step: float) -> torch.Tensor:
    """d2x/dq2[qdot, qdot] (n, 3) by one batched forward of q and q +- h qdot/|qdot|."""
    u, speed = direction_and_speed(qdot)
    x = positions_batch(torch.stack([q + step * u, q, q - step * u]))
    return second_difference(x[0], x[1], x[2], step, speed)


def curvature_force(jacobian: torch.Tensor, masses: torch.Tensor, xddot: torch.Tensor) -> torch.Tensor:
    """J^T diag(m) d2x[qdot, qdot] (k_q,), in N m per unit of q (kg m^2/s^2 for angles).

    jacobian: (3n, k_q), rows x0 y0 z0 x1 ...; masses: (n,) kg; xddot: (n, 3) m/s^2.
    """
    return jacobian.T @ (masses[:, None] * xddot).reshape(-1)


def curvature_term_ad(positions: Positions, masses: torch.Tensor, q: torch.Tensor,
                      qdot: torch.Tensor) -> torch.Tensor:
    """The whole curvature term from scratch by forward AD: J by jacfwd, d2x by jvp of jvp. (k_q,)"""
    jacobian = torch.func.jacfwd(positions)(q).reshape(-1, q.shape[0])
    _, _, xddot = second_derivative_ad(positions, q, qdot)
    return curvature_force(jacobian, masses, xddot)
