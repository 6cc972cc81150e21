"""The root-polynomial map (neurok_ros/dynamics/root_polynomial_map.py): a map with a kink at q = 0,
x ~ x_0 + a q + b |q|^1.5 on each side, is fitted exactly, its analytic derivatives are one-sided
at the kink, a contact velocity there is met on the side it moves into, and sides retimed to one
starting speed keep the energy through the kink."""
import numpy as np
import pytest
import torch

from neurok_ros.dynamics.contacts import at_points
from neurok_ros.dynamics.initial_conditions import one_sided_initial_velocity
from neurok_ros.dynamics.integrate import simulate
from neurok_ros.dynamics.lagrangian import LagrangianSystem
from neurok_ros.dynamics.potentials import Potentials
from neurok_ros.dynamics.root_polynomial_map import (
    RootPolynomialMap,
    fit_root_polynomial_map,
    rescale_negative,
    root_kinematic_map,
    side_speeds,
)

pytestmark = pytest.mark.unit

REST = torch.tensor([[0.0, 0.1, 0.2], [0.3, -0.1, 0.0]], dtype=torch.float64)
OPEN = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.5, 0.0]], dtype=torch.float64)  # velocity at 0+, per unit q
CLOSE = torch.tensor([[0.0, 0.0, 2.0], [0.0, -1.0, 0.0]], dtype=torch.float64)  # velocity at 0-, per unit -q
BEND = torch.tensor([[0.0, 0.2, 0.0], [0.1, 0.0, 0.0]], dtype=torch.float64)


def kinked(q: torch.Tensor) -> torch.Tensor:
    """q (S,) -> (S, 2, 3): x_0 + |q| (OPEN or CLOSE) + |q|^1.5 BEND + q^2 BEND / 2."""
    side = torch.where(q[:, None, None] >= 0, OPEN, CLOSE)
    a = q.abs()[:, None, None]
    return REST + a * side + a ** 1.5 * BEND + 0.5 * a ** 2 * BEND


def fitted(scale: float = 2.0):
    w = torch.linspace(0.05, 1.0, 12, dtype=torch.float64)
    q = torch.cat([torch.zeros(1, dtype=torch.float64), scale * w ** 2, -scale * w ** 2])
    return fit_root_polynomial_map(q[:, None], kinked(q), degree=4, scale=scale)


def test_the_fit_reproduces_a_kinked_map_and_its_derivatives():
    rmap = fitted()
    assert rmap.fit_rms < 1e-12 and rmap.degree == 4
    q = torch.tensor([-1.7, -0.3, -1e-3, 1e-3, 0.4, 1.9], dtype=torch.float64)
    np.testing.assert_allclose(rmap.positions(q[:, None]), kinked(q), atol=1e-10)
    h = 1e-6
    for value in q.tolist():
        point = torch.tensor([value], dtype=torch.float64)
        x, jac, curvature = rmap.expand(point, torch.tensor([0.7], dtype=torch.float64))
        numeric = (kinked(point + h) - kinked(point - h))[0] / (2 * h)
        np.testing.assert_allclose(jac[:, 0].reshape(2, 3), numeric, rtol=1e-5, atol=1e-7)
        second = (kinked(point + 1e-4) - 2 * kinked(point) + kinked(point - 1e-4))[0] / 1e-8
        np.testing.assert_allclose(curvature, 0.49 * second, rtol=1e-3, atol=1e-5)
        velocity = rmap.positions_and_velocities(point[None], torch.tensor([[0.7]], dtype=torch.float64))[1][0]
        np.testing.assert_allclose(velocity, 0.7 * jac[:, 0].reshape(2, 3), atol=1e-12)


def test_derivatives_at_the_kink_are_taken_on_the_side_the_motion_goes():
    rmap = fitted()
    zero = torch.zeros(1, dtype=torch.float64)
    _, opening, _ = rmap.expand(zero, torch.tensor([1.0], dtype=torch.float64))
    _, closing, _ = rmap.expand(zero, torch.tensor([-1.0], dtype=torch.float64))
    np.testing.assert_allclose(opening[:, 0].reshape(2, 3), OPEN, atol=1e-9)
    np.testing.assert_allclose(closing[:, 0].reshape(2, 3), -CLOSE, atol=1e-9)


def test_a_contact_velocity_at_the_kink_picks_the_side_it_moves_into():
    kmap = root_kinematic_map(fitted(), torch.full((2,), 0.5, dtype=torch.float64))
    contact = at_points([0])
    opening = one_sided_initial_velocity(kmap, contact, torch.tensor([[0.3, 0.0, 0.0]], dtype=torch.float64))
    assert float(opening.qdot0[0]) == pytest.approx(0.3, rel=1e-6) and opening.relative < 1e-6
    # point 0 closes along +z: pushed that way the coordinate goes negative at the same speed
    closing = one_sided_initial_velocity(kmap, contact, torch.tensor([[0.0, 0.0, 0.2]], dtype=torch.float64))
    assert float(closing.qdot0[0]) == pytest.approx(-0.1, rel=1e-6) and closing.relative < 1e-6
    # -x is neither side's motion (opening is +x, closing moves point 0 along z only): a joint at its limit
    blocked = one_sided_initial_velocity(kmap, contact, torch.tensor([[-0.3, 0.0, 0.0]], dtype=torch.float64))
    assert float(blocked.qdot0[0]) == 0.0 and blocked.relative == pytest.approx(1.0)


def test_bad_samples_are_refused():
    q = torch.tensor([0.0, 0.5, 1.0, 1.5], dtype=torch.float64)
    with pytest.raises(ValueError, match="one side"):
        fit_root_polynomial_map(q[:, None], kinked(q), degree=3, scale=1.5)
    with pytest.raises(ValueError, match="q = 0"):
        fit_root_polynomial_map(q[1:, None], kinked(q[1:]), degree=2, scale=1.5)


def test_sides_retimed_to_one_speed_keep_the_energy_through_the_kink():
    # OPEN and CLOSE start at different speeds, so M(q) jumps at q = 0; an integrator that steps over
    # the jump keeps qdot and the energy changes at every crossing. Retimed, the sides match.
    rmap, masses = fitted(), torch.tensor([1.0, 2.0], dtype=torch.float64)
    plus, minus = side_speeds(rmap, masses)
    assert plus == pytest.approx(1.5 ** 0.5) and minus == pytest.approx(6.0 ** 0.5)
    matched = rescale_negative(rmap, plus / minus)
    assert side_speeds(matched, masses) == pytest.approx((plus, plus))
    q = torch.tensor([[-0.8], [-0.1], [0.3]], dtype=torch.float64)
    np.testing.assert_allclose(matched.positions(q), rmap.positions(q * torch.where(q < 0, plus / minus, 1.0)),
                               atol=1e-12)
    drifts = []
    for surface in (rmap, matched):
        system = LagrangianSystem(root_kinematic_map(surface, masses), Potentials(stiffness=4.0, rest_positions=REST))
        trajectory = simulate(system, torch.zeros(1, dtype=torch.float64), torch.ones(1, dtype=torch.float64),
                              np.linspace(0.0, 6.0, 61), method="rk4", step_size=1e-2)
        energy = (trajectory.kinetic + trajectory.potential).numpy()
        assert int((np.diff(np.sign(trajectory.q[1:, 0].numpy())) != 0).sum()) >= 3  # it swings through q = 0
        drifts.append(float(np.ptp(energy) / energy[0]))
    assert drifts[0] > 0.5 and drifts[1] < 0.01


def _cradle(tilt: float = 0.0) -> LagrangianSystem:
    """One point of 1 kg lifted by |q| on both sides of the kink (x = (q, 0, |q|)), under gravity
    tilted by `tilt` along x: a V-shaped well, both sides starting at the same speed."""
    zero = torch.zeros(1, 3, dtype=torch.float64)
    rmap = RootPolynomialMap(zero.reshape(-1), torch.tensor([[1.0, 0.0, 1.0]], dtype=torch.float64),
                             torch.tensor([[-1.0, 0.0, 1.0]], dtype=torch.float64), 1.0, 1)
    return LagrangianSystem(root_kinematic_map(rmap, torch.ones(1, dtype=torch.float64)),
                            Potentials(gravity=(tilt, 0.0, -9.81)))


def test_a_slow_coordinate_comes_to_rest_in_a_kink_that_cradles_it():
    """A ball in a V-shaped well bounces through its bottom at a period that goes with its speed:
    released 2e-4 above it, it keeps bouncing (18 ms between crossings) and keeps its energy; released
    1e-8 above it, it would cross every 0.1 ms, so it comes to rest there, its last kinetic energy
    booked as dissipated, and stays; released at the bottom it never moves. A sideways pull stronger
    than gravity (along +x) takes it out again, to the right."""
    times = np.linspace(0.0, 1.0, 11)
    zero = torch.zeros(1, dtype=torch.float64)

    def run(q0: float, tilt: float = 0.0):
        return simulate(_cradle(tilt), torch.tensor([q0], dtype=torch.float64), zero, times, method="dp45",
                        rtol=1e-6, atol=1e-12)

    bouncing = run(2e-4)
    assert float(bouncing.q.abs().max()) > 1e-4 and bouncing.energy_drift() < 1e-3
    assert float(bouncing.dissipated[-1]) == 0.0
    released = run(1e-8)
    assert float(released.q[-1].abs()) == 0.0 and float(released.qdot[-1].abs()) == 0.0
    assert released.rhs_evaluations < 2000 and float(released.dissipated[-1]) > 0.0
    assert released.energy_drift() < 1e-3  # the rest is booked: T + V - W + D stays
    still = run(0.0)
    assert float(still.q.abs().max()) == 0.0 and still.rhs_evaluations < 200
    assert float(run(0.0, tilt=25.0).q[-1]) > 0.1
