"""PolynomialMap: exact derivatives, and the solver on a polynomial fitted to an analytic map."""
import math

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from neurok_ros.dynamics.integrate import simulate
from neurok_ros.dynamics.kinematic_map import KinematicMap, expand, positions_and_velocities
from neurok_ros.dynamics.lagrangian import LagrangianSystem
from neurok_ros.dynamics.polynomial_map import fit_polynomial_map, monomial_exponents, polynomial_kinematic_map
from neurok_ros.dynamics.potentials import Potentials
from neurok_ros.simulation.surrogate import ball_samples, fit_surrogate, frame_error, refine_surrogate

DT = torch.float64
pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


def test_monomials_up_to_degree():
    exponents = monomial_exponents(3, 2)
    assert exponents.shape == (10, 3)  # C(3 + 2, 2)
    assert exponents.sum(1).tolist() == [0, 1, 1, 1, 2, 2, 2, 2, 2, 2]
    assert len({tuple(e) for e in exponents.tolist()}) == 10


def test_cubic_is_recovered_with_exact_derivatives():
    """A random cubic map of 3 coordinates: the degree-3 fit reproduces it, and its J and
    d2x[qdot, qdot] equal torch.func's derivatives of the true map."""
    gen = torch.Generator().manual_seed(0)
    exponents = monomial_exponents(3, 3)
    truth = torch.randn(len(exponents), 5 * 3, generator=gen, dtype=DT)

    def true_positions(q):
        return (torch.prod(q[..., None, :] ** exponents, dim=-1) @ truth).reshape(*q.shape[:-1], 5, 3)

    q = torch.as_tensor(ball_samples(60, 3, 1.5, np.random.default_rng(0)))
    pmap = fit_polynomial_map(q, true_positions(q), 3, scale=1.5)
    assert pmap.degree == 3 and pmap.fit_rms < 1e-10
    point = torch.tensor([0.3, -0.7, 0.5], dtype=DT)
    velocity = torch.tensor([1.1, 0.4, -2.0], dtype=DT)
    x, jac, xddot = pmap.expand(point, velocity)
    torch.testing.assert_close(x, true_positions(point))
    torch.testing.assert_close(jac, torch.func.jacfwd(true_positions)(point).reshape(15, 3))

    def velocity_of(p):
        return torch.func.jvp(true_positions, (p,), (velocity,))[1]

    torch.testing.assert_close(xddot, torch.func.jvp(velocity_of, (point,), (velocity,))[1])
    kmap = polynomial_kinematic_map(pmap, torch.ones(5, dtype=DT))
    assert kmap.derivatives == "analytic"
    _, jac2, xddot2 = expand(kmap, point, velocity)
    torch.testing.assert_close(jac2, jac)
    frames = torch.stack([point, -point])
    _, xdot = positions_and_velocities(kmap, frames, torch.stack([velocity, velocity]))
    torch.testing.assert_close(xdot[0], (jac @ velocity).reshape(5, 3))


def test_too_few_samples_is_an_error():
    with pytest.raises(ValueError, match="cannot fit"):
        fit_polynomial_map(torch.zeros(5, 2, dtype=DT), torch.zeros(5, 1, 3, dtype=DT), 3)


def _lid_map(length: float = 0.3, points: int = 6):
    """A lid hinged on the x axis: x(q) = R_x(q) x0, points along the lid (y) at z = 0."""
    offsets = torch.linspace(length / points, length, points, dtype=DT)
    x0 = torch.stack([torch.zeros_like(offsets), offsets, torch.zeros_like(offsets)], dim=1)

    def batch(q):
        a = q[..., :1, None]
        y, z = x0[:, 1], x0[:, 2]
        return torch.stack([x0[:, 0].expand(a.shape[:-2] + x0[:, 0].shape),
                            torch.cos(a[..., 0]) * y - torch.sin(a[..., 0]) * z,
                            torch.sin(a[..., 0]) * y + torch.cos(a[..., 0]) * z], dim=-1)

    masses = torch.full((points,), 1.0 / points, dtype=DT)
    return KinematicMap(lambda q: batch(q[None])[0], masses, 1, batch, "fd"), x0, masses


def test_surrogate_of_a_hinged_lid_swings_like_the_pendulum():
    """Fitted to the exact lid map (degree 8, angles within 1.6 rad, one refinement), the polynomial
    drives the solver through the physical pendulum's swing: angle RMS error < 0.5 degree over 1.5 s,
    and the polynomial stays within 0.1 mm of the true map along the solved states."""
    kmap, x0, masses = _lid_map()
    surrogate = fit_surrogate(kmap, degree=8, radius=1.6, seed=0, oversampling=4.0)
    start = 0.3
    times = torch.linspace(0.0, 1.5, 46, dtype=DT)

    def solve(solver_map):
        system = LagrangianSystem(solver_map, Potentials(gravity=(0.0, 0.0, -9.81)))
        return simulate(system, torch.tensor([start], dtype=DT), torch.zeros(1, dtype=DT), times,
                        method="dopri5", rtol=1e-8, atol=1e-10)

    trajectory = solve(surrogate.kmap)
    surrogate = refine_surrogate(kmap, surrogate, trajectory.q, spread=0.05, per_state=2)
    trajectory = solve(surrogate.kmap)
    inertia = float((masses * x0[:, 1] ** 2).sum())
    lever = float((masses * x0[:, 1]).sum())

    def pendulum(t, s):
        return [s[1], -9.81 * lever * math.cos(s[0]) / inertia]

    reference = solve_ivp(pendulum, (0.0, 1.5), [start, 0.0], t_eval=times.numpy(), rtol=1e-10, atol=1e-12)
    angle_error = np.degrees(trajectory.q[:, 0].numpy() - reference.y[0])
    assert np.sqrt(np.mean(angle_error ** 2)) < 0.5
    assert reference.y[0].min() < start - 1.0  # it really fell: a swing of more than 1 rad
    assert frame_error(kmap, surrogate.pmap, trajectory.q, len(masses))["max_m"] < 1e-4
