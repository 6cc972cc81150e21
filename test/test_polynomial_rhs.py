"""The NumPy right-hand side on a polynomial map (and on a root map, with or without deformation
coordinates) equals lagrangian.py's torch one, term by term, and the solver gives the same motion
with either."""
import numpy as np
import pytest
import torch

from neurok_ros.dynamics.contacts import Contacts, at_points
from neurok_ros.dynamics.external_forces import DragForce, PushForce
from neurok_ros.dynamics.integrate import simulate
from neurok_ros.dynamics.kinematic_map import KinematicMap
from neurok_ros.dynamics.lagrangian import LagrangianSystem, state_derivative
from neurok_ros.dynamics.polynomial_map import fit_polynomial_map, polynomial_kinematic_map
from neurok_ros.dynamics.polynomial_rhs import numpy_state_derivative
from neurok_ros.dynamics.potentials import Potentials
from neurok_ros.simulation.surrogate import ball_samples

DT = torch.float64
K, N = 3, 7
pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("one_torch_thread")]


def _system(gravity=(0.0, 0.0, -9.81), stiffness=40.0, barrier=0.0, damping=0.0, forces=(), basis=False,
            pin=False):
    """A degree-3 polynomial fitted to a smooth non-polynomial map of 7 points (so the fit is not
    exact and every coefficient is non-zero)."""
    gen = torch.Generator().manual_seed(3)
    rest = torch.randn(N, 3, generator=gen, dtype=DT) * 0.2
    mix = torch.randn(K, N * 3, generator=gen, dtype=DT) * 0.05

    def truth(q):
        return rest + (torch.sin(q @ mix) + 0.5 * (q @ mix) ** 2).reshape(*q.shape[:-1], N, 3)

    q = torch.as_tensor(ball_samples(80, K, 2.0, np.random.default_rng(1)))
    pmap = fit_polynomial_map(q, truth(q), 3, scale=2.0)
    masses = torch.linspace(0.5, 1.5, N, dtype=DT)
    potentials = Potentials(gravity=gravity, stiffness=stiffness,
                            rest_positions=pmap.positions(torch.zeros(K, dtype=DT)),
                            pin_stiffness=900.0 if pin else 0.0,
                            pinned=torch.tensor([1.0, 0, 0, 1, 0, 0, 0], dtype=DT) if pin else None, barrier=barrier,
                            basis=torch.randn(5, K, generator=gen, dtype=DT) if basis else None,
                            latent_offset=torch.randn(5, generator=gen, dtype=DT) * 0.1 if basis else None)
    return LagrangianSystem(polynomial_kinematic_map(pmap, masses), potentials, damping=damping, forces=forces)


def _forces():
    drag = DragForce(Contacts([[1, 4]], [[0.3, 0.7]]), [0.0, 0.5, 1.0],
                     torch.tensor([[[0.0, 0.0, 0.0]], [[0.1, 0.0, 0.05]], [[0.1, 0.2, 0.05]]], dtype=DT), 80.0, 3.0)
    push = PushForce(at_points([2, 5]), torch.tensor([[0.5, 0.0, -1.0], [0.0, 0.3, 0.0]], dtype=DT), 0.2, 0.6)
    return (drag, push)


@pytest.mark.parametrize("options", [
    {},
    {"gravity": (0.0, 0.0, 0.0), "stiffness": 0.0},
    {"barrier": 2.0},
    {"barrier": 2.0, "basis": True, "damping": 0.7},
    {"damping": 1.5, "forces": "both"},
    {"pin": True, "stiffness": 0.0},
    {"pin": True, "barrier": 1.0, "forces": "both"},
])
def test_numpy_right_hand_side_equals_the_torch_one(options):
    options = dict(options)
    if options.get("forces") == "both":
        options["forces"] = _forces()
    system = _system(**options)
    fast = numpy_state_derivative(system)
    assert fast is not None
    rng = np.random.default_rng(0)
    for t_mid in (0.1, 0.4, 0.8):  # before, inside and after the push window; two drag segments
        y = np.concatenate([rng.normal(scale=0.8, size=2 * K), rng.normal(size=2)])
        expected = state_derivative(system, t_mid)(t_mid + 0.03, torch.as_tensor(y)).numpy()
        got = fast(t_mid + 0.03, t_mid, y)
        assert got.shape == expected.shape == (2 * K + 2,)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


def test_other_maps_and_forces_keep_the_torch_right_hand_side():
    plain = KinematicMap(lambda q: q.reshape(1, 3), torch.ones(1, dtype=DT), 3)
    assert numpy_state_derivative(LagrangianSystem(plain)) is None
    assert numpy_state_derivative(_torch_only(_system())) is None

    class Wind:  # a force type the NumPy side does not know
        contacts = at_points([0])

        def breakpoints(self):
            return []

    assert numpy_state_derivative(_system(forces=(Wind(),))) is None


class _SamePolynomial:
    """The polynomial's derivatives under another type: polynomial_rhs does not take it."""

    def __init__(self, pmap):
        self.expand, self.positions_and_velocities = pmap.expand, pmap.positions_and_velocities


def _torch_only(system: LagrangianSystem) -> LagrangianSystem:
    pmap = system.kmap.analytic
    kmap = KinematicMap(pmap.positions, system.kmap.masses, K, pmap.positions, analytic=_SamePolynomial(pmap))
    return LagrangianSystem(kmap, system.potentials, system.damping, system.forces)


def test_motion_is_the_same_with_either_right_hand_side():
    """A push and a drag with gravity, stiffness and damping: dp45 on the NumPy right-hand side
    against dp45 and torchdiffeq's dopri5 on the torch one: the same trajectory and energy balance."""
    system = _system(damping=0.3, forces=_forces())
    q0 = torch.zeros(K, dtype=DT)
    qdot0 = torch.tensor([0.5, -0.2, 0.1], dtype=DT)
    times = np.linspace(0.0, 1.2, 37)
    ours = simulate(system, q0, qdot0, times, method="dp45", rtol=1e-9, atol=1e-11)
    same_steps = simulate(_torch_only(system), q0, qdot0, times, method="dp45", rtol=1e-9, atol=1e-11)
    theirs = simulate(_torch_only(system), q0, qdot0, times, method="dopri5", rtol=1e-9, atol=1e-11)
    assert float(ours.q.abs().max()) > 0.05  # it moves
    assert ours.rhs_evaluations == same_steps.rhs_evaluations
    torch.testing.assert_close(ours.q, same_steps.q, rtol=1e-9, atol=1e-11)
    torch.testing.assert_close(ours.q, theirs.q, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(ours.work, theirs.work, rtol=1e-6, atol=1e-8)
    assert ours.energy_drift() < 1e-5


@pytest.mark.parametrize("options", [{}, {"damping": 0.8, "forces": "both"}, {"pin": True, "barrier": 1.5,
                                                                             "basis": True}])
def test_numpy_right_hand_side_of_a_carried_polynomial_equals_the_torch_one(options):
    """The polynomial carried by a free rigid body (simulation/free_body.py) with its shape-matching
    strain: the NumPy right-hand side equals the torch one at turned, moving states."""
    from neurok_ros.simulation.free_body import CarriedSpring, carried_map

    options = dict(options)
    if options.get("forces") == "both":
        options["forces"] = _forces()
    inner = _system(**options)
    masses = inner.kmap.masses
    rest = inner.potentials.rest_positions
    kmap = carried_map(inner.kmap, (masses @ rest / masses.sum()).numpy())
    potentials = inner.potentials
    potentials.extra = CarriedSpring(kmap.analytic, 300.0, rest)
    system = LagrangianSystem(kmap, potentials, damping=inner.damping, forces=inner.forces, tikhonov=1e-12)
    fast = numpy_state_derivative(system)
    assert fast is not None
    rng = np.random.default_rng(4)
    for t_mid in (0.1, 0.4):
        y = np.concatenate([rng.normal(scale=0.6, size=2 * (K + 6)), rng.normal(size=2)])
        expected = state_derivative(system, t_mid)(t_mid + 0.03, torch.as_tensor(y)).numpy()
        got = fast(t_mid + 0.03, t_mid, y)
        assert got.shape == expected.shape == (2 * (K + 6) + 2,)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
