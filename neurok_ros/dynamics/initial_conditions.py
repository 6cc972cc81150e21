"""Initial state from contact conditions: qdot0 from contact velocities, q0 from contact positions.

- Velocities: regularised least squares on J_c qdot0 = v_c. When the contacts do not pin qdot0
  (3C < k_q), the solution with the least kinetic energy 1/2 qdot^T M qdot is taken: the response
  of the object to an impulse at the contacts. Solved by an SVD of J_c in the M-whitened
  coordinates with Tikhonov filtering; the residual J_c qdot0 - v_c is reported.
- Positions: Levenberg–Marquardt on |x_c(q0) - target|^2 starting at q_init (so with more
  coordinates than constraints it stays near q_init); the residual is reported.
"""
from dataclasses import dataclass
from typing import Optional

import torch

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.dynamics.contacts import Contacts, contact_jacobian, contact_positions, nearest
from neurok_ros.dynamics.kinematic_map import KinematicMap, jacobian
from neurok_ros.dynamics.mass_matrix import mass_matrix, regularise


@dataclass
class VelocityFit:
    """qdot0 (k_q,); residual (C, 3) m/s = J_c qdot0 - v_c; residual_norm m/s (Euclidean over all
    contacts); relative = residual_norm / |v_c| (0 when v_c = 0)."""

    qdot0: torch.Tensor
    residual: torch.Tensor
    residual_norm: float
    relative: float


@dataclass
class PositionFit:
    """q0 (k_q,); residual (C, 3) metres = x_c(q0) - target; rms metres; iterations taken."""

    q0: torch.Tensor
    residual: torch.Tensor
    rms: float
    iterations: int


@dataclass
class InitialState:
    """Everything a simulation needs from ContactConditions at t = 0.

    q0, qdot0 (k_q,); contacts; snap_distance (C,) metres from each requested contact position to
    the simulation points it was snapped to; position_fit (None unless fitted); velocity_fit.
    """

    q0: torch.Tensor
    qdot0: torch.Tensor
    contacts: Contacts
    snap_distance: torch.Tensor
    position_fit: Optional[PositionFit]
    velocity_fit: VelocityFit


def initial_velocity(contact_jac: torch.Tensor, velocities: torch.Tensor, mass: Optional[torch.Tensor] = None,
                     regularisation: float = 1e-8) -> VelocityFit:
    """qdot0 from J_c qdot0 = v_c.

    contact_jac: (3C, k_q); velocities: (C, 3) m/s; mass: (k_q, k_q) metric for the least-kinetic-
    energy choice (identity when None); regularisation: Tikhonov lambda relative to the largest
    squared singular value (directions with s^2 << lambda are damped instead of amplified).
    """
    k = contact_jac.shape[1]
    v = velocities.reshape(-1).to(contact_jac.dtype)
    eps = torch.finfo(contact_jac.dtype).eps
    metric = (torch.eye(k, dtype=contact_jac.dtype, device=contact_jac.device) if mass is None
              else regularise(mass, max(1e-12, 10.0 * eps)))
    chol = torch.linalg.cholesky(metric)
    # qdot = L^-T y, so qdot^T M qdot = |y|^2 and J_c qdot = B y with B = J_c L^-T.
    b = torch.linalg.solve_triangular(chol, contact_jac.T, upper=False).T
    u, s, vh = torch.linalg.svd(b, full_matrices=False)
    lam = regularisation * (s.max() ** 2 if s.numel() else 0.0)
    filt = s / (s * s + lam + torch.finfo(s.dtype).tiny)
    y = vh.T @ (filt * (u.T @ v))
    qdot0 = torch.linalg.solve_triangular(chol.T, y[:, None], upper=True)[:, 0]
    return _velocity_fit(qdot0, contact_jac, v)


def _velocity_fit(qdot0: torch.Tensor, contact_jac: torch.Tensor, velocities: torch.Tensor) -> VelocityFit:
    """qdot0 (k_q,) with its residual against velocities (3C,) or (C, 3) m/s through contact_jac (3C, k_q)."""
    v = velocities.reshape(-1).to(contact_jac.dtype)
    residual = (contact_jac @ qdot0 - v).reshape(-1, 3)
    norm = float(torch.linalg.vector_norm(residual))
    speed = float(torch.linalg.vector_norm(v))
    return VelocityFit(qdot0, residual, norm, norm / speed if speed > 0 else 0.0)


def contact_initial_velocity(kmap: KinematicMap, contacts: Contacts, velocities: torch.Tensor, q0: torch.Tensor,
                             direction: Optional[torch.Tensor] = None) -> VelocityFit:
    """initial_velocity at q0 (k_q,) with the map's contact Jacobian and mass matrix; velocities (C, 3)
    m/s. direction (k_q,): for a map with analytic one-sided derivatives, the side they are taken on."""
    if direction is None:
        _, jac = jacobian(kmap, q0)
    else:
        _, jac, _ = kmap.analytic.expand(q0, direction)
    return initial_velocity(contact_jacobian(contacts, jac), velocities, mass_matrix(jac, kmap.masses))


def fit_initial_positions(kmap: KinematicMap, contacts: Contacts, targets: torch.Tensor,
                          q_init: Optional[torch.Tensor] = None, iterations: int = 50,
                          tolerance: float = 1e-20) -> PositionFit:
    """q0 minimising |x_c(q0) - targets|^2 by Levenberg–Marquardt from q_init (zeros by default).

    targets: (C, 3) metres; tolerance: stop when the squared residual (m^2) falls below it, or
    when no damped step lowers it any more. Trial steps cost one forward; J only after acceptance.
    """
    q = (torch.zeros(kmap.num_coords, dtype=kmap.dtype, device=kmap.masses.device)
         if q_init is None else q_init.clone())
    targets = targets.to(kmap.dtype)
    eye = torch.eye(kmap.num_coords, dtype=kmap.dtype, device=q.device)
    taken = 0
    with torch.no_grad():
        x, jac = jacobian(kmap, q)
        r = (contact_positions(contacts, x) - targets).reshape(-1)
        cost, lam = float(r @ r), 1e-3
        while taken < iterations and cost >= tolerance:
            taken += 1
            jc = contact_jacobian(contacts, jac)
            jtj, grad = jc.T @ jc, jc.T @ r
            scale = float(torch.diagonal(jtj).mean()) + torch.finfo(kmap.dtype).tiny
            while lam <= 1e8:
                step = torch.linalg.solve(jtj + lam * scale * eye, -grad)
                r_new = (contact_positions(contacts, kmap.positions(q + step)) - targets).reshape(-1)
                cost_new = float(r_new @ r_new)
                if cost_new < cost:
                    break
                lam *= 10.0
            else:
                break
            q, r, cost, lam = q + step, r_new, cost_new, max(lam / 10.0, 1e-12)
            _, jac = jacobian(kmap, q)
    residual = r.reshape(-1, 3)
    return PositionFit(q, residual, float(torch.sqrt((residual * residual).sum(1).mean())), taken)


def initial_state(kmap: KinematicMap, conditions: ContactConditions, q_init: Optional[torch.Tensor] = None,
                  fit_positions: bool = False, blend: int = 1, regularisation: float = 1e-8,
                  least_kinetic_energy: bool = True) -> InitialState:
    """q0, qdot0 and contacts from ContactConditions (mesh frame, metres, m/s).

    Contacts snap to the `blend` nearest simulation points at q_init (inverse-distance weights).
    fit_positions: move q0 so the snapped contacts reach the requested positions (LM); otherwise
    q0 = q_init. qdot0 by `initial_velocity`, in the kinetic-energy metric unless told otherwise.
    """
    conditions.validate()
    q0 = (torch.zeros(kmap.num_coords, dtype=kmap.dtype, device=kmap.masses.device)
          if q_init is None else q_init)
    targets = torch.as_tensor(conditions.positions, dtype=kmap.dtype, device=kmap.masses.device)
    with torch.no_grad():
        contacts, snap = nearest(kmap.positions(q0), targets, k=blend)
        fit = None
        if fit_positions:
            fit = fit_initial_positions(kmap, contacts, targets, q0)
            q0 = fit.q0
        _, jac = jacobian(kmap, q0)
        mass = mass_matrix(jac, kmap.masses) if least_kinetic_energy else None
        velocities = torch.as_tensor(conditions.velocities, dtype=kmap.dtype, device=kmap.masses.device)
        vel = initial_velocity(contact_jacobian(contacts, jac), velocities, mass, regularisation)
    return InitialState(q0, vel.qdot0, contacts, snap, fit, vel)
