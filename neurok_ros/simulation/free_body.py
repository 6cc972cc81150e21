"""A free body around the learned latent chart: an object without joints carries its own rigid motion.

    x(q) = R(s) (x_in(q_in) - c0) + c0 + t(s),   q = (q_in (k), s (6))

x_in is the latent chart's map (learned_map, or its polynomial surrogate) and s six rigid
coordinates: slides along x, y, z, then turns about z, y, x through c0, the simulation points'
centre of mass at rest (dynamics/joint_tree.with_free_base, singular only at 90 degrees of the
middle turn). A soft object or a cloth therefore falls at g (pins are springs on held points) and turns as a
whole when pushed off its centre. Derivatives are exact given the inner map's: J = [R J_in | J_s],
d2x[qdot, qdot] = R a_in + 2 w x (R J_in qdot_in) + the rigid body's own bias.

The elastic restoring toward the input pose is a shape-matching energy of the inner shape,
V = 1/2 sum s_i m_i |R* (x_in,i - c_x) + c_X - X_i|^2 with R*, c_x, c_X the mass-weighted best rigid
fit (Kabsch) of x_in to the rest shape X: zero for any rigid motion, of the carrier or of the inner
shape itself (the learned space can move the whole shape too; a spring in the carried frame would
then make the carrier undoing an inner rigid motion an infinitely stiff mode). Its gradient, by
the envelope theorem, is J_in^T (s m R*^T e) on q_in (e the fit residuals) and zero on s
(CarriedSpring).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from neurok_ros.dynamics.joint_tree import JointTree, body_states, cross, point_jacobian, with_free_base
from neurok_ros.dynamics.kinematic_map import KinematicMap, expand, positions_and_velocities
from neurok_ros.geometry.rigid_alignment import rotation_from_covariance

RIGID = 6  # rigid coordinates after the inner ones
ROOT = 6  # the carried body in the free-base tree


class CarriedMap:
    """The analytic side of the carried KinematicMap (kinematic_map.KinematicMap.analytic)."""

    def __init__(self, inner: KinematicMap, centre: np.ndarray):
        self.inner = inner
        self.k = inner.num_coords
        empty = JointTree(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)), [])
        self.tree, _ = with_free_base(empty, np.asarray(centre, dtype=np.float64))
        self.centre = np.asarray(centre, dtype=np.float64)
        self._last: Optional[tuple] = None
        self._numpy_last: Optional[tuple] = None

    @property
    def num_coords(self) -> int:
        return self.k + RIGID

    def _rigid(self, s: torch.Tensor, sdot: torch.Tensor):
        states = body_states(self.tree, s.detach().double().cpu().numpy(), sdot.detach().double().cpu().numpy())
        like = s
        to = lambda a: torch.as_tensor(a, dtype=like.dtype, device=like.device)  # noqa: E731
        return states, to(states.R[ROOT]), to(states.c[ROOT]), to(states.w[ROOT]), to(states.v[ROOT]), \
            to(states.alpha[ROOT]), to(states.a[ROOT])

    def expand(self, q: torch.Tensor, qdot: torch.Tensor):
        """x (n, 3), J (3n, k + 6), d2x[qdot, qdot] (n, 3) at (q, qdot)."""
        k = self.k
        x_in, j_in, a_in = expand(self.inner, q[:k], qdot[:k])
        self._last = (q.detach().clone(), x_in, j_in)
        states, R, c, w, _, alpha, a = self._rigid(q[k:], qdot[k:])
        centre = torch.as_tensor(self.centre, dtype=q.dtype, device=q.device)
        r = (x_in - centre) @ R.T
        x = r + c
        n = x.shape[0]
        j_turned = torch.einsum("ij,njk->nik", R, j_in.reshape(n, 3, k))
        u = j_turned @ qdot[:k]
        rigid = point_jacobian(self.tree, states, np.full(n, ROOT), x.detach().double().cpu().numpy())
        j_rigid = torch.as_tensor(rigid, dtype=q.dtype, device=q.device)
        spin = w.expand_as(r)
        bias = (torch.cross(alpha.expand_as(r), r, dim=1) + torch.cross(spin, torch.cross(spin, r, dim=1), dim=1)
                + a + 2.0 * torch.cross(spin, u, dim=1) + a_in @ R.T)
        return x, torch.cat([j_turned, j_rigid], dim=2).reshape(3 * n, k + RIGID), bias

    def numpy_expansion(self):
        """(q, qdot) -> x (3n,), J (k + 6, 3n) and d2x[qdot, qdot] (3n,) in float64 NumPy, as
        `expand` (dynamics/polynomial_rhs.py's right-hand side), or None when the inner map is not a
        polynomial. The inner map's x and J at the last q are kept for CarriedSpring.numpy_gradient."""
        from neurok_ros.dynamics.polynomial_map import PolynomialMap
        from neurok_ros.dynamics.polynomial_rhs import polynomial_expansion

        if not isinstance(self.inner.analytic, PolynomialMap):
            return None
        inner, k, centre = polynomial_expansion(self.inner.analytic), self.k, self.centre

        def expansion(q: np.ndarray, qdot: np.ndarray):
            x_in, j_in, a_in = inner(q[:k], qdot[:k])
            self._numpy_last = (q[:k].copy(), x_in, j_in)
            n = x_in.size // 3
            states = body_states(self.tree, q[k:], qdot[k:])
            R, w = states.R[ROOT], states.w[ROOT]
            r = (x_in.reshape(n, 3) - centre) @ R.T
            x = r + states.c[ROOT]
            j_turned = j_in.reshape(k, n, 3) @ R.T
            u = np.einsum("k,knd->nd", qdot[:k], j_turned)
            rigid = point_jacobian(self.tree, states, np.full(n, ROOT), x)  # (n, 3, 6)
            jac = np.concatenate([j_turned.reshape(k, 3 * n), rigid.transpose(2, 0, 1).reshape(RIGID, 3 * n)])
            bias = (cross(states.alpha[ROOT], r) + cross(w, cross(w, r)) + states.a[ROOT] + 2.0 * cross(w, u)
                    + a_in.reshape(n, 3) @ R.T)
            return x.reshape(-1), jac, bias.reshape(-1)

        return expansion

    def positions_and_velocities(self, q_frames: torch.Tensor, qdot_frames: torch.Tensor):
        """x and xdot (T, n, 3) for T states (T, k + 6)."""
        k = self.k
        x_in, v_in = positions_and_velocities(self.inner, q_frames[:, :k], qdot_frames[:, :k])
        centre = torch.as_tensor(self.centre, dtype=q_frames.dtype, device=q_frames.device)
        xs, vs = [], []
        for t in range(q_frames.shape[0]):
            _, R, c, w, v, _, _ = self._rigid(q_frames[t, k:], qdot_frames[t, k:])
            r = (x_in[t] - centre) @ R.T
            xs.append(r + c)
            vs.append(torch.cross(w.expand_as(r), r, dim=1) + v + v_in[t] @ R.T)
        return torch.stack(xs), torch.stack(vs)

    def rigid_motion(self, q_frames: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        """R (T, 3, 3) and the translation (T, 3) that take the inner frame to the world, x = R x_in + t."""
        rotations, translations = [], []
        for s in q_frames[:, self.k:].detach().double().cpu().numpy():
            states = body_states(self.tree, s, np.zeros(RIGID))
            rotations.append(states.R[ROOT])
            translations.append(states.c[ROOT] - states.R[ROOT] @ self.centre)
        return np.array(rotations), np.array(translations)


def carried_map(inner: KinematicMap, centre: np.ndarray) -> KinematicMap:
    """The KinematicMap of the inner map carried by a free rigid body through centre (3,) metres."""
    analytic = CarriedMap(inner, centre)

    def positions(q: torch.Tensor) -> torch.Tensor:
        return analytic.expand(q, torch.zeros_like(q))[0]

    return KinematicMap(positions, inner.masses, analytic.num_coords, analytic=analytic)


def shape_matching(x: torch.Tensor, rest: torch.Tensor, weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(residuals e (..., n, 3), R* (..., 3, 3)) of the weighted best rigid fit of x (..., n, 3) onto
    rest (n, 3): e = R* (x - c_x) + c_X - rest, weights (n,) >= 0."""
    w = weights / weights.sum()
    c_x = torch.einsum("n,...nd->...d", w, x)
    c_rest = w @ rest
    a, b = x - c_x[..., None, :], rest - c_rest
    rotation = rotation_from_covariance(torch.einsum("n,...ni,nj->...ij", w, a, b))  # rest ~ R* (x - c_x) + c_rest
    return a @ rotation.transpose(-1, -2) + c_rest - rest, rotation


@dataclass
class CarriedSpring:
    """The shape-matching energy of the module docstring (Potentials.extra): carrier (CarriedMap),
    stiffness s (1/s^2, per kg), rest X (n, 3) metres (the inner map at q_in = 0)."""

    carrier: CarriedMap
    stiffness: float
    rest: torch.Tensor

    def gradient(self, q: torch.Tensor) -> torch.Tensor:
        """dV/dq (k + 6,): J_in^T (s m R*^T e) on the inner coordinates, zero on the rigid ones."""
        k = self.carrier.k
        last = self.carrier._last
        if last is not None and last[0].shape == q.shape and torch.equal(last[0], q):
            x_in, j_in = last[1], last[2]
        else:
            x_in, j_in, _ = expand(self.carrier.inner, q[:k], torch.zeros_like(q[:k]))
        masses = self.carrier.inner.masses.to(q.dtype)
        residual, rotation = shape_matching(x_in, self.rest.to(x_in.dtype), masses)
        force = (self.stiffness * masses)[:, None] * (residual @ rotation)
        out = torch.zeros_like(q)
        out[:k] = j_in.T @ force.reshape(-1)
        return out

    def numpy_gradient(self):
        """q (k + 6,) -> dV/dq (k + 6,) in float64 NumPy, as `gradient`, from the inner x and J that
        the carrier's NumPy expansion kept at the same q (dynamics/polynomial_rhs.py); None when the
        carrier has no NumPy expansion."""
        expansion = self.carrier.numpy_expansion()
        if expansion is None:
            return None
        k = self.carrier.k
        masses = self.carrier.inner.masses.detach().double().cpu().numpy()
        weights = masses / masses.sum()
        rest = self.rest.detach().double().cpu().numpy()
        rest_centre = weights @ rest
        b = rest - rest_centre
        stiff = self.stiffness * masses

        def gradient(q: np.ndarray) -> np.ndarray:
            last = getattr(self.carrier, "_numpy_last", None)
            if last is None or not np.array_equal(last[0], q[:k]):
                expansion(q, np.zeros_like(q))
                last = self.carrier._numpy_last
            _, x_in, j_in = last
            a = x_in.reshape(-1, 3)
            a = a - weights @ a
            u, _, vh = np.linalg.svd((weights[:, None] * a).T @ b)
            flip = np.ones(3)
            flip[2] = np.sign(np.linalg.det(vh.T @ u.T)) or 1.0
            rotation = vh.T @ np.diag(flip) @ u.T  # rest ~ R* (x - c_x) + c_rest
            residual = a @ rotation.T + rest_centre - rest
            out = np.zeros_like(q)
            out[:k] = j_in @ ((stiff[:, None] * (residual @ rotation)).reshape(-1))
            return out

        return gradient

    def energy(self, q: torch.Tensor) -> torch.Tensor:
        """V (...) J for q (..., k + 6)."""
        k = self.carrier.k
        flat = q.reshape(-1, q.shape[-1])[:, :k]
        x_in = positions_and_velocities(self.carrier.inner, flat, torch.zeros_like(flat))[0]
        masses = self.carrier.inner.masses.to(q.dtype)
        d, _ = shape_matching(x_in, self.rest.to(x_in.dtype), masses)
        return (0.5 * self.stiffness * torch.einsum("n,tnd,tnd->t", masses, d, d)).reshape(q.shape[:-1])
