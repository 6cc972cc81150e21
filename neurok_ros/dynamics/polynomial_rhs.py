"""The right-hand side of lagrangian.py in float64 NumPy, for a system whose map is a PolynomialMap,
or any analytic map that offers `numpy_expansion()` (simulation/free_body.CarriedMap: a polynomial
carried by a free rigid body), with an extra potential that offers `numpy_gradient()`.

On the polynomial map a right-hand side is a few dozen operations on arrays of a few thousand
numbers. torch spends about 10 us of dispatch on each such operation and NumPy about 1 us, so the
same equations cost 0.55 ms per right-hand side in torch and 0.11 ms here (k = 4, 65 points, degree
4, one core). The arrays are taken out of the system once; every call is then

    phi = monomials(q / s)                   (P,)           from a (degree + 1, k) power table
    B = phi @ stack                          (1 + k + h, 3n): x, dx/dq_i, d2x/dq_i dq_l
    M = J diag(m) J^T,  rhs = -J (m d2x[qdot, qdot] + dV/dx) - dV_q/dq - c M qdot + J_c f

with J (k, 3n) here (the transpose of lagrangian.py's), so the products need no transposes.
test_polynomial_rhs checks it against lagrangian.state_derivative term by term.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from neurok_ros.dynamics.external_forces import DragForce, PushForce
from neurok_ros.dynamics.lagrangian import LagrangianSystem
from neurok_ros.dynamics.polynomial_map import PolynomialMap
from neurok_ros.dynamics.potentials import spring_constants


def _array(tensor) -> np.ndarray:
    return tensor.detach().double().cpu().numpy()


def _contact_blend(contacts, num_points: int) -> np.ndarray:
    """(C, n) weights: row c blends the simulation points of contact c."""
    blend = np.zeros((contacts.num_contacts, num_points))
    indices, weights = contacts.indices.cpu().numpy(), _array(contacts.weights)
    for c in range(contacts.num_contacts):
        np.add.at(blend[c], indices[c], weights[c])
    return blend


def polynomial_expansion(pmap: PolynomialMap):
    """(q, qdot) -> x (3n,), J (k, 3n) and d2x[qdot, qdot] (3n,) of a PolynomialMap."""
    k = pmap.num_coords
    stack = _array(pmap.stack)
    exponents = pmap.exponents.cpu().numpy()
    columns = np.arange(k)
    degrees = np.arange(pmap.degree + 1, dtype=np.float64)[:, None]
    scale = pmap.scale
    rows, cols = (p.cpu().numpy() for p in pmap.pairs)
    pair_weight = _array(pmap.pair_weight)
    blocks = 1 + k + len(pair_weight)

    def expansion(q: np.ndarray, qdot: np.ndarray):
        powers = (q / scale)[None, :] ** degrees  # (degree + 1, k)
        phi = np.prod(powers[exponents, columns], axis=1)
        b = (phi @ stack).reshape(blocks, -1)
        return b[0], b[1:1 + k], (pair_weight * qdot[rows] * qdot[cols]) @ b[1 + k:]

    return expansion


def numpy_state_derivative(system: LagrangianSystem) -> Optional[Callable[[float, float, np.ndarray], np.ndarray]]:
    """f(t, t_mid, y) -> dy/dt, (2 k + 2,) float64, the same as lagrangian.state_derivative(system,
    t_mid)(t, y); None when the map has no NumPy expansion (module docstring), the extra potential no
    NumPy gradient, or a force is neither a push nor a drag (the torch right-hand side then serves)."""
    pmap = system.kmap.analytic
    potentials = system.potentials
    if any(not isinstance(f, (PushForce, DragForce)) for f in system.forces):
        return None
    if isinstance(pmap, PolynomialMap):
        expansion = polynomial_expansion(pmap)
    else:
        expansion = getattr(pmap, "numpy_expansion", lambda: None)()
    extra = None
    if potentials.extra is not None:
        extra = getattr(potentials.extra, "numpy_gradient", lambda: None)()
    if expansion is None or (potentials.extra is not None and extra is None):
        return None
    k, n = system.kmap.num_coords, len(system.kmap.masses)
    m3 = np.repeat(_array(system.kmap.masses), 3)

    gravity = np.tile(np.asarray(potentials.gravity, dtype=np.float64), n)
    springs = spring_constants(potentials, potentials.rest_positions) if potentials.rest_positions is not None else None
    springs = None if springs is None else np.repeat(_array(springs), 3)  # per coordinate, 1/s^2
    rest = None if springs is None else _array(potentials.rest_positions).reshape(-1)
    barrier = float(potentials.barrier)
    basis = None if potentials.basis is None else _array(potentials.basis)
    offset = None if potentials.latent_offset is None else _array(potentials.latent_offset)
    damping, tikhonov, tiny = float(system.damping), float(system.tikhonov), np.finfo(np.float64).tiny
    forces = [(force, _contact_blend(force.contacts, n)) for force in system.forces]
    eye = np.eye(k)

    def f(t: float, t_mid: float, y: np.ndarray) -> np.ndarray:
        q, qdot = y[:k], y[k:2 * k]
        x, jac, curvature = expansion(q, qdot)
        jac_m = jac * m3
        mass = jac_m @ jac.T
        # m d2x[qdot, qdot] + dV/dx = m (d2x - g + s (x - x_rest)), pulled back by J
        accel = curvature - gravity
        if springs is not None:
            accel = accel + springs * (x - rest)
        rhs = -(jac_m @ accel)
        if barrier:  # written in the latent coordinates, which come first
            latent = q if basis is None else q[:basis.shape[1]]
            z = latent if basis is None else basis @ latent
            if offset is not None:
                z = z + offset
            pull = barrier * (z if basis is None else basis.T @ z)
            rhs[:len(pull)] -= pull
        if extra is not None:
            rhs = rhs - extra(q)
        m_qdot = mass @ qdot
        if damping:
            rhs = rhs - damping * m_qdot
        external = np.zeros(k)
        if forces:
            x3, jac3 = x.reshape(n, 3), jac.reshape(k, n, 3)
            for force, blend in forces:
                jac_c = np.einsum("cn,knd->kcd", blend, jac3).reshape(k, -1)  # J_c^T, (k, 3C)
                push = force.contact_forces(t, t_mid, blend @ x3, (qdot @ jac_c).reshape(-1, 3))
                external = external + jac_c @ push.reshape(-1)
            rhs = rhs + external
        regularised = mass + (tikhonov * np.trace(mass) / k + tiny) * eye
        qddot = np.linalg.solve(regularised, rhs)
        return np.concatenate([qdot, qddot, [external @ qdot, damping * (qdot @ m_qdot)]])

    return f
