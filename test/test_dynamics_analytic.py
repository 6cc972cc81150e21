"""Latent Lagrangian dynamics on analytic kinematic maps (no learned model), against physics.

Each map is x(q) for a rigid or articulated body written in closed form; references are solved
independently (scipy) or known in closed form.
"""
import math

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.dynamics.contacts import at_points, contact_jacobian, contact_positions, nearest
from neurok_ros.dynamics.external_forces import PushForce, drag_from_conditions
from neurok_ros.dynamics.initial_conditions import fit_initial_positions, initial_state, initial_velocity
from neurok_ros.dynamics.integrate import simulate
from neurok_ros.dynamics.kinematic_map import KinematicMap, choose_derivatives, jacobian
from neurok_ros.dynamics.lagrangian import LagrangianSystem
from neurok_ros.dynamics.mass_matrix import mass_matrix
from neurok_ros.dynamics.potentials import Potentials, potential_energy, potential_gradient

G = 9.81
DT = torch.float64

# torch's forward-AD decompositions call torch.jit.script once per process.
pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


def _grid(xs, ys, zs) -> torch.Tensor:
    return torch.cartesian_prod(torch.as_tensor(xs, dtype=DT), torch.as_tensor(ys, dtype=DT),
                                torch.as_tensor(zs, dtype=DT))


def _masses(n: int, total: float, seed: int) -> torch.Tensor:
    w = 0.5 + torch.rand(n, generator=torch.Generator().manual_seed(seed), dtype=DT)
    return total * w / w.sum()


def _trig_map(offset: torch.Tensor, basis: torch.Tensor, angles: torch.Tensor):
    """x(q) = offset + [cos(q T), sin(q T)] @ basis, batched over leading dims of q.

    offset (n, 3); basis (2 a, n, 3); angles T (k_q, a). Few, matmul-heavy ops keep forward AD cheap.
    """
    n = offset.shape[0]
    flat_offset, flat_basis = offset.reshape(-1), basis.reshape(basis.shape[0], -1)

    def batch(q: torch.Tensor) -> torch.Tensor:
        a = q @ angles
        features = torch.cat([torch.cos(a), torch.sin(a)], dim=-1)
        return (flat_offset + features @ flat_basis).reshape(q.shape[:-1] + (n, 3))

    return batch


def _rotation_map(points: torch.Tensor, axis: int):
    """x(q) = R_axis(q[0]) points (Rodrigues: parallel part + cos perpendicular + sin axis x p)."""
    u = torch.zeros(3, dtype=DT)
    u[axis] = 1.0
    parallel = points[:, axis:axis + 1] * u
    perpendicular = points - parallel
    turned = torch.linalg.cross(u.expand_as(points), points)
    return _trig_map(parallel, torch.stack([perpendicular, turned]), torch.ones(1, 1, dtype=DT))


def _rigid_map(points, masses, axis, derivatives="ad"):
    batch = _rotation_map(points, axis)
    return KinematicMap(lambda q: batch(q), masses, 1, positions_batch=batch, derivatives=derivatives)


# --- hinged lid under gravity vs the physical pendulum -------------------------------------------

def _lid():
    points = _grid(np.linspace(-0.3, 0.3, 5), np.linspace(0.02, 0.42, 8), [0.0, 0.02])
    return points, _masses(points.shape[0], 1.2, seed=1)


@pytest.mark.parametrize("derivatives,method,stiffness,damping", [
    ("ad", "rk4", 0.0, 0.0),
    ("fd", "rk4", 0.0, 0.0),
    ("fd", "rk4", 30.0, 0.8),
    ("ad", "dopri5", 30.0, 0.8),
    ("fd", "dp45", 30.0, 0.8),
])
def test_hinged_lid_matches_physical_pendulum(derivatives, method, stiffness, damping):
    points, masses = _lid()
    kmap = _rigid_map(points, masses, axis=0, derivatives=derivatives)
    potentials = Potentials(gravity=(0.0, 0.0, -G), stiffness=stiffness, rest_positions=points)
    system = LagrangianSystem(kmap, potentials, damping=damping)
    theta0, t_end = 0.9, 1.5
    times = np.linspace(0.0, t_end, 46)
    traj = simulate(system, torch.tensor([theta0], dtype=DT), torch.zeros(1, dtype=DT), times,
                    method=method, step_size=1 / 60, rtol=1e-7, atol=1e-9)

    # Physical pendulum about the x axis from the same points and masses: I th'' = -dV/dth - c I th'.
    m, y, z = masses.numpy(), points[:, 1].numpy(), points[:, 2].numpy()
    inertia, s_y, s_z = float(np.sum(m * (y ** 2 + z ** 2))), float(np.sum(m * y)), float(np.sum(m * z))

    def pendulum(_, s):
        th, om = s
        torque = -G * (s_y * math.cos(th) - s_z * math.sin(th)) - stiffness * inertia * math.sin(th)
        return [om, torque / inertia - damping * om]

    ref = solve_ivp(pendulum, (0.0, t_end), [theta0, 0.0], t_eval=times, method="DOP853",
                    rtol=1e-11, atol=1e-12).y[0]
    rms_deg = math.degrees(float(np.sqrt(np.mean((traj.q[:, 0].numpy() - ref) ** 2))))
    assert rms_deg <= 0.5, f"joint-angle RMS error {rms_deg:.3g} deg"
    assert rms_deg <= 0.01, f"an exact rigid map should track to ~1e-4 deg, got {rms_deg:.3g}"
    assert ref.min() < 0.0, "the lid should fall through horizontal"
    assert traj.energy_drift() < 1e-4
    if damping:
        assert float(traj.dissipated[-1]) > 0.0


# --- door pushed at its edge, no gravity ----------------------------------------------------------

def _door():
    points = _grid(np.linspace(0.1, 0.8, 8), [0.0, 0.03], np.linspace(0.0, 2.0, 11))
    return points, _masses(points.shape[0], 12.0, seed=2)


@pytest.mark.parametrize("contact_x,blend,derivatives", [(0.8, 1, "ad"), (0.75, 2, "fd")])
def test_door_turns_at_v_over_r(contact_x, blend, derivatives):
    points, masses = _door()
    kmap = _rigid_map(points, masses, axis=2, derivatives=derivatives)
    speed = 0.5
    conditions = ContactConditions(positions=[[contact_x, 0.0, 1.0]], velocities=[[0.0, speed, 0.0]])
    init = initial_state(kmap, conditions, blend=blend)
    rate = speed / contact_x
    # Snapped to the nearest simulation point(s); a 2-point blend lands exactly between them.
    assert float(init.snap_distance[0]) == pytest.approx(0.0 if blend == 1 else 0.05, abs=1e-12)
    x0 = contact_positions(init.contacts, kmap.positions(init.q0))[0]
    np.testing.assert_allclose(x0.numpy(), [contact_x, 0.0, 1.0], atol=1e-12)
    assert init.velocity_fit.relative < 1e-6
    assert abs(float(init.qdot0[0]) - rate) < 1e-6 * rate

    system = LagrangianSystem(kmap, Potentials())
    times = np.linspace(0.0, 2.0, 31)
    traj = simulate(system, init.q0, init.qdot0, times, method="rk4", step_size=1 / 30)
    angle = traj.q[1:, 0].numpy()
    np.testing.assert_allclose(angle / times[1:], rate, rtol=0.01)
    np.testing.assert_allclose(traj.qdot[:, 0].numpy(), rate, rtol=0.01)
    # The contact point itself moves on the circle of radius r at speed v.
    x_c = contact_positions(init.contacts, traj.points)[:, 0]
    np.testing.assert_allclose(torch.linalg.vector_norm(x_c[:, :2], dim=1).numpy(), contact_x, rtol=1e-9)


def test_velocity_residual_reports_unreachable_directions():
    points, masses = _door()
    kmap = _rigid_map(points, masses, axis=2)
    x, jac = jacobian(kmap, torch.zeros(1, dtype=DT))
    contacts, _ = nearest(x, torch.tensor([[0.8, 0.0, 1.0]], dtype=DT))
    # A radial push cannot turn a door: qdot0 = 0 and the whole request is residual.
    fit = initial_velocity(contact_jacobian(contacts, jac), torch.tensor([[1.0, 0.0, 0.0]], dtype=DT))
    assert abs(float(fit.qdot0[0])) < 1e-12
    assert fit.relative == pytest.approx(1.0, abs=1e-9)


# --- two-link chain under gravity conserves T + V -------------------------------------------------

def _chain():
    """Planar two-link chain in the x-z plane, joints at the origin and at the end of link 1 (0.5 m).

    q = (theta1, theta2), theta2 relative; points on both links, offset +-5 cm along y.
    """
    s1 = torch.linspace(0.05, 0.5, 10, dtype=DT).repeat_interleave(2)
    s2 = torch.linspace(0.04, 0.4, 10, dtype=DT).repeat_interleave(2)
    o = torch.tensor([-0.05, 0.05], dtype=DT).repeat(10)
    zero = torch.zeros_like(s1)
    offset = torch.cat([torch.stack([zero, o, zero], 1), torch.stack([zero, o, zero], 1)])

    def along(length, axis):
        out = torch.zeros(length.numel(), 3, dtype=DT)
        out[:, axis] = length
        return out

    half = torch.full_like(s2, 0.5)
    empty = torch.zeros(20, 3, dtype=DT)
    basis = torch.stack([
        torch.cat([along(s1, 0), along(half, 0)]),   # cos theta1
        torch.cat([empty, along(s2, 0)]),           # cos(theta1 + theta2)
        torch.cat([along(s1, 2), along(half, 2)]),   # sin theta1
        torch.cat([empty, along(s2, 2)]),           # sin(theta1 + theta2)
    ])
    angles = torch.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=DT)
    masses = torch.cat([_masses(20, 1.0, 3), _masses(20, 0.6, 4)])
    return _trig_map(offset, basis, angles), masses


@pytest.mark.parametrize("method", ["rk4", "dopri5", "dp45"])
def test_two_link_chain_conserves_energy(method):
    batch, masses = _chain()
    kmap = KinematicMap(lambda q: batch(q), masses, 2, positions_batch=batch, derivatives="fd")
    system = LagrangianSystem(kmap, Potentials(gravity=(0.0, 0.0, -G)))
    times = np.linspace(0.0, 2.0, 41)
    traj = simulate(system, torch.tensor([0.0, 0.3], dtype=DT), torch.zeros(2, dtype=DT), times,
                    method=method, step_size=0.01, rtol=1e-7, atol=1e-9)
    e = traj.total.numpy()
    drift = np.max(np.abs(e - e[0])) / float(traj.kinetic.max())
    assert float(traj.kinetic.max()) > 1.0, "the chain should swing"
    assert drift <= 0.005, f"T+V drift {drift:.3g} of max kinetic energy"
    assert traj.energy_drift() <= 0.005


# --- drag along a path and push over a window ----------------------------------------------------

def test_drag_pulls_contact_to_path_end():
    points, masses = _door()
    kmap = _rigid_map(points, masses, axis=2, derivatives="fd")
    r, final = 0.8, math.radians(60.0)
    knots = np.linspace(1 / 6, 1.0, 6)
    angles = final * knots / knots[-1]
    path = np.stack([r * np.cos(angles), r * np.sin(angles), np.ones_like(angles)], axis=1)[:, None]
    conditions = ContactConditions(positions=[[r, 0.0, 1.0]], velocities=[[0.0, 0.0, 0.0]],
                                   path_times=knots, path_positions=path)
    init = initial_state(kmap, conditions)
    start = contact_positions(init.contacts, kmap.positions(init.q0))
    drag = drag_from_conditions(conditions, init.contacts, start, stiffness=400.0, damping=80.0)
    system = LagrangianSystem(kmap, Potentials(), forces=[drag])
    traj = simulate(system, init.q0, init.qdot0, np.linspace(0.0, 2.5, 76), method="rk4", step_size=1 / 60)
    end = contact_positions(init.contacts, traj.points[-1])[0].numpy()
    assert np.linalg.norm(end - path[-1, 0]) < 0.01
    assert abs(float(traj.q[-1, 0]) - final) < math.radians(1.0)
    assert traj.energy_drift() < 1e-3
    # Pulled the right way all along: the angle rises while the target moves.
    assert np.all(np.diff(traj.q[:31, 0].numpy()) > -1e-6)
    # The damper acts on v_c - p'(t): the contact keeps up with the moving target (a damper on
    # v_c alone would lag by c |p'| / k ~ 0.17 m here).
    x_c = contact_positions(init.contacts, traj.points[:31])[:, 0]
    target = torch.stack([drag.target(t, t, x_c[0])[0][0] for t in traj.times[:31].tolist()])
    assert float(torch.linalg.vector_norm(x_c - target, dim=1).max()) < 0.08


@pytest.mark.parametrize("method", ["rk4", "dopri5", "dp45"])
def test_push_window_momentum_equals_impulse(method):
    points = _grid(np.linspace(-0.2, 0.2, 4), np.linspace(-0.1, 0.1, 3), [0.0, 0.05])
    masses = _masses(points.shape[0], 2.5, seed=5)

    def batch(q):
        return points + q[..., None, :]

    kmap = KinematicMap(lambda q: batch(q), masses, 3, positions_batch=batch, derivatives="fd")
    force = torch.tensor([[2.0, -1.0, 0.5]], dtype=DT)
    t0, t1 = 0.2137, 0.5311
    push = PushForce(at_points([5]), force, t0, t1)
    system = LagrangianSystem(kmap, Potentials(), forces=[push])
    qdot0 = torch.tensor([0.1, 0.0, -0.2], dtype=DT)
    traj = simulate(system, torch.zeros(3, dtype=DT), qdot0, np.linspace(0.0, 1.0, 31),
                    method=method, step_size=1 / 60)
    momentum_change = float(masses.sum()) * (traj.qdot[-1] - qdot0)
    impulse = force[0] * (t1 - t0)
    np.testing.assert_allclose(momentum_change.numpy(), impulse.numpy(), rtol=0.01, atol=1e-3)
    error = torch.linalg.vector_norm(momentum_change - impulse)
    assert float(error) < 1e-5 * float(torch.linalg.vector_norm(impulse))
    # Work done equals the kinetic energy gained.
    assert float(traj.work[-1]) == pytest.approx(float(traj.kinetic[-1] - traj.kinetic[0]), rel=1e-5)


# --- conditions and potentials --------------------------------------------------------------------

def test_contact_positions_fit_q0():
    points, masses = _lid()
    kmap = _rigid_map(points, masses, axis=0)
    idx = [7, 60]
    targets = kmap.positions(torch.tensor([0.4], dtype=DT))[idx]
    fit = fit_initial_positions(kmap, at_points(idx), targets)
    assert abs(float(fit.q0[0]) - 0.4) < 1e-8
    assert fit.rms < 1e-9


def test_least_kinetic_energy_velocity_is_the_impulse_response():
    gen = torch.Generator().manual_seed(7)
    n, k = 20, 8
    base = torch.rand(n, 3, generator=gen, dtype=DT)
    basis = torch.randn(n * 3, k, generator=gen, dtype=DT)
    masses = _masses(n, 3.0, seed=8)
    kmap = KinematicMap(lambda q: base + (basis @ q).reshape(n, 3), masses, k, derivatives="ad")
    conditions = ContactConditions(positions=base[[3]].numpy(), velocities=[[0.3, -0.2, 0.1]])
    init = initial_state(kmap, conditions)
    jc = basis.reshape(n, 3, k)[3]
    m = mass_matrix(basis, masses)
    minv_jt = torch.linalg.solve(m, jc.T)
    expected = minv_jt @ torch.linalg.solve(jc @ minv_jt, torch.tensor([0.3, -0.2, 0.1], dtype=DT))
    np.testing.assert_allclose(init.qdot0.numpy(), expected.numpy(), rtol=1e-6, atol=1e-9)
    assert init.velocity_fit.relative < 1e-6


def test_potential_gradient_matches_autograd():
    gen = torch.Generator().manual_seed(9)
    n, k, latent = 15, 5, 12
    base = torch.rand(n, 3, generator=gen, dtype=DT)
    w1 = torch.randn(16, k, generator=gen, dtype=DT)
    w2 = torch.randn(n * 3, 16, generator=gen, dtype=DT) * 0.1

    def positions(q):
        return base + (w2 @ torch.tanh(w1 @ q)).reshape(n, 3)

    masses = _masses(n, 2.0, seed=10)
    basis, _ = torch.linalg.qr(torch.randn(latent, k, generator=gen, dtype=DT))
    rest = positions(torch.zeros(k, dtype=DT))
    pot = Potentials(gravity=(0.3, -1.0, -G), stiffness=4.0, rest_positions=rest,
                     barrier=2.5, basis=basis)
    kmap = KinematicMap(positions, masses, k, derivatives="ad")
    q = torch.randn(k, generator=gen, dtype=DT).requires_grad_(True)
    (grad_auto,) = torch.autograd.grad(potential_energy(pot, positions(q), q, masses), q)
    x, jac = jacobian(kmap, q.detach())
    grad = potential_gradient(pot, x, jac, q.detach(), masses)
    np.testing.assert_allclose(grad.numpy(), grad_auto.numpy(), rtol=1e-10, atol=1e-12)


def test_auto_derivatives_picks_one_and_times_both():
    points, masses = _lid()
    kmap = _rigid_map(points, masses, axis=0, derivatives="auto")
    chosen = choose_derivatives(kmap)
    assert chosen in ("ad", "fd") and kmap.derivatives == chosen
    assert set(kmap.timings) == {"ad", "fd"}


def test_pinned_point_oscillates_about_its_sag_while_the_other_falls():
    """Two points on a vertical line: A at height q0, B at q0 + q1 (one coordinate shared). A is
    pinned (k_pin 1/s^2), B is free. Euler-Lagrange: q1 carries B's fall, and A oscillates about its
    sag g / k_pin at sqrt(k_pin): z_A = -g / k_pin (1 - cos(sqrt(k_pin) t)), z_B = -g t^2 / 2."""
    directions = torch.tensor([[[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]], dtype=DT)
    rest = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]], dtype=DT)
    masses = torch.tensor([0.3, 0.7], dtype=DT)
    kmap = KinematicMap(lambda q: rest + torch.einsum("i,ind->nd", q, directions), masses, 2,
                        lambda q: rest + torch.einsum("bi,ind->bnd", q, directions), derivatives="fd")
    k_pin = 400.0
    potentials = Potentials(gravity=(0.0, 0.0, -G), rest_positions=rest, pin_stiffness=k_pin,
                            pinned=torch.tensor([1.0, 0.0], dtype=DT))
    times = np.linspace(0.0, 0.6, 37)
    traj = simulate(LagrangianSystem(kmap, potentials), torch.zeros(2, dtype=DT), torch.zeros(2, dtype=DT), times,
                    method="dp45", rtol=1e-9, atol=1e-11)
    z_a, z_b = traj.points[:, 0, 2].numpy(), traj.points[:, 1, 2].numpy()
    np.testing.assert_allclose(z_a, -G / k_pin * (1.0 - np.cos(math.sqrt(k_pin) * times)), atol=1e-5)  # sag 25 mm
    np.testing.assert_allclose(z_b, -0.5 * G * times ** 2, atol=1e-5)
    assert traj.energy_drift() < 1e-5
    free = simulate(LagrangianSystem(kmap, Potentials(gravity=(0.0, 0.0, -G))), torch.zeros(2, dtype=DT),
                    torch.zeros(2, dtype=DT), times, method="dp45", rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(free.points[:, 0, 2].numpy(), -0.5 * G * times ** 2, atol=1e-5)  # unpinned: falls
