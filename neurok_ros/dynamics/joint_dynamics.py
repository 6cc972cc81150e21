"""Euler–Lagrange equations in joint coordinates, with hard joint limits: exact rigid-part motion.

    M(q) qddot = J^T m (g - a_bias) - (d + c M) qdot + sum_c J_c^T f_c  (+ Coulomb friction mu per joint)

over the mass points of a JointTree (joint_tree.py), M = J^T diag(m) J; a_bias = d2x/dq2[qdot, qdot]
(closed form); d (J,) joint damping (N m s/rad or N s/m), c mass-proportional damping (1/s), f_c
the push and drag forces (external_forces.py) at massless contact points. Locked joints (held by a
pin) keep q = qdot = 0.

Integration: classical RK4 with fixed steps, every output time a step boundary. After a step, the
joint friction mu (J,) (N m or N) acts as the impulse mu h against each joint's velocity, never
reversing it (so a joint whose friction exceeds what drives it sticks, with no stiff term in the
equations); then a joint past a limit is put back on it and hit by the impulse that sends its velocity to -e times
its approach velocity (restitution e, 0 = an inelastic stop), spread over the other joints by the
mass matrix (Delta qdot = -(1 + e) qdot_j M^-1 e_j / (M^-1)_jj): a lid pushed shut stops closed. The
energy the stops remove is booked as dissipated with the damping and friction losses, so
T + V - W + D stays constant (W: work of the external forces).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from neurok_ros.dynamics.joint_tree import JointTree, body_states, point_jacobian, point_motion
from neurok_ros.errors import Cancelled

TIKHONOV = 1e-12  # relative regulariser of M (a joint moving no mass, e.g. a free base's empty turn)
PUSH_ENERGY = 10.0  # a push gives at most this many times the whole object's kinetic energy at its speed


@dataclass
class JointForce:
    """An external force on contact points: indices (C,) into the system's points and a force object
    with contact_forces(t, t_mid, x_c (C, 3), v_c (C, 3)) -> (C, 3) N and breakpoints()."""

    indices: np.ndarray
    force: object


@dataclass
class JointSystem:
    """tree; body (n,) int and local (n, 3) metres: the points (mass-carrying and massless contact
    points) in their bodies' frames at q = 0; masses (n,) kg (0 for contact points); gravity (3,) m/s^2;
    damping and friction (J,) per joint; proportional_damping c (1/s, D = c M); lower / upper (J,)
    limits (-inf / inf for none); restitution e in [0, 1]; locked (J,) bool; forces: JointForce list."""

    tree: JointTree
    body: np.ndarray
    local: np.ndarray
    masses: np.ndarray
    gravity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    damping: Optional[np.ndarray] = None
    friction: Optional[np.ndarray] = None
    lower: Optional[np.ndarray] = None
    upper: Optional[np.ndarray] = None
    restitution: float = 0.0
    proportional_damping: float = 0.0
    locked: Optional[np.ndarray] = None
    forces: Sequence[JointForce] = ()

    def __post_init__(self):
        count = self.tree.num_joints
        full = lambda value, fill: (np.full(count, fill, dtype=np.float64) if value is None  # noqa: E731
                                    else np.broadcast_to(np.asarray(value, dtype=np.float64), (count,)).copy())
        self.damping, self.friction = full(self.damping, 0.0), full(self.friction, 0.0)
        self.lower, self.upper = full(self.lower, -np.inf), full(self.upper, np.inf)
        self.locked = np.zeros(count, dtype=bool) if self.locked is None else np.asarray(self.locked, bool)
        self.body = np.asarray(self.body, dtype=np.int64)
        self.local = np.asarray(self.local, dtype=np.float64).reshape(-1, 3)
        self.masses = np.asarray(self.masses, dtype=np.float64).reshape(-1)
        self.gravity = np.asarray(self.gravity, dtype=np.float64).reshape(3)
        if not 0.0 <= self.restitution <= 1.0:
            raise ValueError(f"restitution must be in [0, 1], got {self.restitution}")
        self.free = np.flatnonzero(~self.locked)
        self.heavy = np.flatnonzero(self.masses > 0)

    @property
    def num_coords(self) -> int:
        return self.tree.num_joints


def kinematics(system: JointSystem, q: np.ndarray, qdot: np.ndarray, points: Optional[np.ndarray] = None):
    """x, xdot, bias (n, 3) and J (n, 3, J) of the points (all, or those indexed by `points`)."""
    states = body_states(system.tree, q, qdot)
    body = system.body if points is None else system.body[points]
    local = system.local if points is None else system.local[points]
    x, xdot, bias = point_motion(states, body, local)
    return x, xdot, bias, point_jacobian(system.tree, states, body, x)


def mass_matrix(system: JointSystem, jac: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """M (J, J) = J^T diag(m) J for the points' Jacobian (n, 3, J) and masses (n,)."""
    return np.einsum("n,nij,nik->jk", masses, jac, jac)


def _solve(m: np.ndarray, rhs: np.ndarray, free: np.ndarray) -> np.ndarray:
    out = np.zeros_like(rhs)
    if len(free):
        sub = m[np.ix_(free, free)]
        sub = sub + TIKHONOV * max(float(np.trace(sub)) / len(free), 1e-300) * np.eye(len(free))
        out[free] = np.linalg.solve(sub, rhs[free])
    return out


def accelerations(system: JointSystem, t: float, t_mid: float, q: np.ndarray, qdot: np.ndarray
                  ) -> tuple[np.ndarray, float, float]:
    """qddot (J,), the external forces' power (W) and the power lost to joint damping (W, >= 0)."""
    x, xdot, bias, jac = kinematics(system, q, qdot)
    heavy = system.heavy
    m = system.masses[heavy]
    mass = mass_matrix(system, jac[heavy], m)
    rhs = np.einsum("n,nij,ni->j", m, jac[heavy], system.gravity[None] - bias[heavy])
    losses = system.damping * qdot + system.proportional_damping * (mass @ qdot)
    rhs -= losses
    external = np.zeros_like(q)
    for applied in system.forces:
        idx = applied.indices
        f = np.asarray(applied.force.contact_forces(t, t_mid, x[idx], xdot[idx]), dtype=np.float64)
        external += np.einsum("cij,ci->j", jac[idx], f.reshape(-1, 3))
    rhs += external
    qddot = _solve(mass, rhs, system.free)
    return qddot, float(external[system.free] @ qdot[system.free]), float(losses[system.free] @ qdot[system.free])


def energies(system: JointSystem, q: np.ndarray, qdot: np.ndarray) -> tuple[float, float]:
    """(kinetic, potential) J: 1/2 sum m |xdot|^2 and -sum m g . x."""
    x, xdot, _, _ = kinematics(system, q, qdot)
    m = system.masses
    return 0.5 * float(m @ np.einsum("ni,ni->n", xdot, xdot)), -float(m @ (x @ system.gravity))


def _friction_impulse(system: JointSystem, q: np.ndarray, qdot: np.ndarray, h: float, q_start: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(q, qdot) after each moving joint's friction impulse mu h, capped so that it stops the joint at
    most; a joint it stops sticks: it goes back to where the step began (q_start)."""
    moving = np.flatnonzero((system.friction > 0) & (qdot != 0) & ~system.locked)
    if not len(moving):
        return q, qdot
    _, _, _, jac = kinematics(system, q, qdot)
    mass = mass_matrix(system, jac[system.heavy], system.masses[system.heavy])
    for j in moving:
        if qdot[j] == 0:
            continue
        unit = np.zeros_like(q)
        unit[j] = 1.0
        response = _solve(mass, unit, system.free)
        if response[j] <= 0:
            continue
        stops = system.friction[j] * h * response[j] >= abs(qdot[j])
        impulse = abs(qdot[j]) / response[j] if stops else system.friction[j] * h
        qdot = qdot - np.sign(qdot[j]) * impulse * response
        if stops:
            qdot[j], q[j] = 0.0, q_start[j]
    return q, qdot


def _stop_at_limits(system: JointSystem, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Put joints past a limit back on it and apply the restitution impulse; (q, qdot, hit). Putting a
    joint back changes the configuration, and so the mass matrix: where that would leave more energy
    than the step ended with, the velocities are scaled down to it (a stop never adds energy; a light
    chain held on its limits step after step gained energy until it diverged)."""
    over = np.flatnonzero((q > system.upper) | (q < system.lower))
    if not len(over):
        return q, qdot, False
    energy = sum(energies(system, q, qdot))
    q = np.clip(q, system.lower, system.upper)
    _, _, _, jac = kinematics(system, q, qdot)
    mass = mass_matrix(system, jac[system.heavy], system.masses[system.heavy])
    free = system.free
    for _ in range(3):  # a few sweeps settle joints that stop together
        for j in over:
            outward = qdot[j] if q[j] >= system.upper[j] else -qdot[j]
            if outward <= 0:
                continue
            unit = np.zeros_like(q)
            unit[j] = 1.0
            response = _solve(mass, unit, free)
            if response[j] <= 0:
                qdot[j] = 0.0
                continue
            qdot = qdot - (1.0 + system.restitution) * qdot[j] * response / response[j]
    kinetic, potential = energies(system, q, qdot)
    if kinetic > 0 and kinetic + potential > energy:
        qdot = qdot * np.sqrt(max(energy - potential, 0.0) / kinetic)
    return q, qdot, True


@dataclass
class JointTrajectory:
    """times (T,) s; q, qdot (T, J); kinetic, potential (T,) J; work (T,) J done by the external forces;
    dissipated (T,) J removed by damping, friction and the stops; impacts: steps that hit a limit;
    steps; seconds of wall time."""

    times: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    work: np.ndarray
    dissipated: np.ndarray
    impacts: int
    steps: int
    seconds: float

    def energy_drift(self) -> float:
        """max |E - E0 - W + D| over the largest energy exchanged (kinetic, potential change, W, D)."""
        total = self.kinetic + self.potential
        balance = total - total[0] - self.work + self.dissipated
        scale = max(float(np.abs(self.kinetic).max()), float(np.abs(self.potential - self.potential[0]).max()),
                    float(np.abs(self.work).max()), float(np.abs(self.dissipated).max()), 1e-300)
        return float(np.abs(balance).max() / scale)


def _breakpoints(system: JointSystem, start: float, end: float) -> list[float]:
    cuts = {float(b) for applied in system.forces for b in applied.force.breakpoints() if start < b < end}
    return sorted(cuts)


def integrate(system: JointSystem, q0: np.ndarray, qdot0: np.ndarray, times: Sequence[float],
              step: float, should_stop: Optional[Callable[[], bool]] = None,
              progress: Optional[Callable[[float], None]] = None) -> JointTrajectory:
    """RK4 from (q0, qdot0) at times[0], reporting every time (T,) s, steps of at most `step` s that
    land on every output time and every force breakpoint. Before every step, should_stop() (when
    given) is asked, and Cancelled raised once it returns True; after every step, progress(fraction
    of the time span done) is called (when given)."""
    started = time.perf_counter()
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    if len(times) < 1 or np.any(np.diff(times) <= 0):
        raise ValueError("times must be a non-empty, strictly increasing sequence")
    if not step > 0:
        raise ValueError(f"step must be positive, got {step}")
    k = system.num_coords
    span = max(float(times[-1] - times[0]), 1e-300)
    q, qdot = np.array(q0, dtype=np.float64), np.array(qdot0, dtype=np.float64)
    q[system.locked], qdot[system.locked] = 0.0, 0.0
    work = dissipated = 0.0
    out_q, out_qdot, out_w, out_d = [q.copy()], [qdot.copy()], [0.0], [0.0]
    impacts = steps = 0

    def derivative(t, t_mid, state):
        qq, vv = state[:k], state[k:2 * k]
        acc, p_ext, p_loss = accelerations(system, t, t_mid, qq, vv)
        return np.concatenate([vv, acc, [p_ext, p_loss]])

    for a, b in zip(times[:-1], times[1:]):
        edges = [a, *_breakpoints(system, a, b), b]
        for s0, s1 in zip(edges[:-1], edges[1:]):
            count = max(1, int(np.ceil((s1 - s0) / step - 1e-9)))
            grid = np.linspace(s0, s1, count + 1)
            t_mid = 0.5 * (s0 + s1)
            for t, t_next in zip(grid[:-1], grid[1:]):
                if should_stop is not None and should_stop():
                    raise Cancelled(f"the simulation was stopped at t = {t:.4f} s")
                h = t_next - t
                y = np.concatenate([q, qdot, [work, dissipated]])
                k1 = derivative(t, t_mid, y)
                k2 = derivative(t + h / 2, t_mid, y + h / 2 * k1)
                k3 = derivative(t + h / 2, t_mid, y + h / 2 * k2)
                k4 = derivative(t_next, t_mid, y + h * k3)
                q_start = q.copy()
                y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
                q, qdot, work, dissipated = y[:k], y[k:2 * k], y[2 * k], y[2 * k + 1]
                steps += 1
                if system.friction.any():
                    before = sum(energies(system, q, qdot))
                    q, qdot = _friction_impulse(system, q.copy(), qdot.copy(), h, q_start)
                    dissipated += before - sum(energies(system, q, qdot))
                if np.any(q > system.upper) or np.any(q < system.lower):
                    before = sum(energies(system, q, qdot))
                    q, qdot, _ = _stop_at_limits(system, q.copy(), qdot.copy())
                    impacts += 1
                    dissipated += before - sum(energies(system, q, qdot))
                if progress is not None:
                    progress((t_next - times[0]) / span)
        out_q.append(q.copy())
        out_qdot.append(qdot.copy())
        out_w.append(work)
        out_d.append(dissipated)
    q_all, qdot_all = np.array(out_q), np.array(out_qdot)
    energy = np.array([energies(system, a, b) for a, b in zip(q_all, qdot_all)])
    return JointTrajectory(times, q_all, qdot_all, energy[:, 0], energy[:, 1], np.array(out_w), np.array(out_d),
                           impacts, steps, time.perf_counter() - started)


def initial_velocity(system: JointSystem, contacts: np.ndarray, velocities: np.ndarray) -> tuple[np.ndarray, float]:
    """qdot0 (J,) at q = 0 that gives the contact points (C,) indices the velocities (C, 3) m/s, by least
    squares with the least kinetic energy; a joint that the fit drives into a limit it sits on stays
    at rest (refitted without it). A push that would take more than PUSH_ENERGY times the kinetic
    energy of the whole object moving at the push's speed (a point on or next to a joint's axis, or
    pushed across what the joints allow: thousands of rad/s) is jammed: qdot0 is scaled down to that
    energy, as a pusher of finite strength would be held back. Returns qdot0 and the relative
    residual |J_c qdot0 - v| / |v|."""
    import torch

    from neurok_ros.dynamics.initial_conditions import initial_velocity as fit

    k = system.num_coords
    q = np.zeros(k)
    _, _, _, jac = kinematics(system, q, q)
    mass = mass_matrix(system, jac[system.heavy], system.masses[system.heavy])
    target = np.asarray(velocities, dtype=np.float64).reshape(-1)
    held = system.locked.copy()
    qdot = np.zeros(k)
    for _ in range(k + 1):
        free = np.flatnonzero(~held)
        qdot = np.zeros(k)
        if len(free):
            contact_jac = jac[contacts][:, :, free].reshape(-1, len(free))
            sub = mass[np.ix_(free, free)] + TIKHONOV * np.eye(len(free)) * max(np.trace(mass) / k, 1e-300)
            qdot[free] = fit(torch.as_tensor(contact_jac), torch.as_tensor(target),
                             torch.as_tensor(sub)).qdot0.numpy()
        blocked = ~held & (((system.upper <= 0) & (qdot > 0)) | ((system.lower >= 0) & (qdot < 0)))
        if not blocked.any():
            break
        held |= blocked
    energy = 0.5 * float(qdot @ mass @ qdot)
    bound = 0.5 * PUSH_ENERGY * float(system.masses[system.heavy].sum()) * float(np.max(np.linalg.norm(
        np.asarray(velocities, dtype=np.float64).reshape(-1, 3), axis=1), initial=0.0)) ** 2
    if energy > bound > 0:
        qdot = qdot * np.sqrt(bound / energy)
    residual = jac[contacts].reshape(-1, k) @ qdot - target
    speed = float(np.linalg.norm(target))
    return qdot, float(np.linalg.norm(residual) / speed) if speed > 0 else 0.0
