"""Rigid bodies on a tree of one-degree-of-freedom joints: closed-form x(q), J(q) and d2x/dq2[qdot, qdot].

Body 0 is the root, fixed to the world; body j + 1 is the child of joint j, whose parent body comes
earlier (parents before children). Every body frame is world-aligned at q = 0 with its origin at its
joint's origin (the root's at the mesh origin), as in the URDF that `neurok articulate` writes, so
q = 0 is the input pose. Joint j turns (revolute) or slides (prismatic) its child by q_j about or
along `axis[j]` through `origin[j]`, both fixed in the parent body (mesh frame and metres at q = 0).

Recursion from parent p to child c over the joint's world axis a = R_p a0, offset d = c_c - c_p:
    revolute   R_c = R_p Rot(a0, q)  w_c = w_p + a qdot     alpha_c = alpha_p + w_p x a qdot
    prismatic  R_c = R_p             w_c = w_p              alpha_c = alpha_p
               ddot_c = alpha_p x d + w_p x (w_p x d) [+ 2 w_p x a qdot, prismatic]
with accelerations at qddot = 0 (the bias). A point r = x - c_b of body b then has velocity
w_b x r + cdot_b and bias acceleration alpha_b x r + w_b x (w_b x r) + cddot_b, and its Jacobian
column for an ancestor joint j is a_j x (x - o_j) (revolute, o_j its world origin) or a_j (prismatic).
A free base is six virtual joints ahead of the object's: three prismatic along x, y, z, then three
revolute about z, y, x through the root's centre of mass (singular only at 90 deg of the middle one).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REVOLUTE, PRISMATIC = 0, 1


@dataclass
class JointTree:
    """parent (J,) int: the parent body of joint j (< j + 1); kind (J,) int: REVOLUTE | PRISMATIC;
    axis (J, 3) unit vectors and origin (J, 3) metres, mesh frame at q = 0; names (J,) str."""

    parent: np.ndarray
    kind: np.ndarray
    axis: np.ndarray
    origin: np.ndarray
    names: list

    def __post_init__(self):
        self.parent = np.asarray(self.parent, dtype=np.int64).reshape(-1)
        self.kind = np.asarray(self.kind, dtype=np.int64).reshape(-1)
        self.axis = np.asarray(self.axis, dtype=np.float64).reshape(-1, 3)
        self.origin = np.asarray(self.origin, dtype=np.float64).reshape(-1, 3)
        count = len(self.parent)
        if not (len(self.kind) == len(self.axis) == len(self.origin) == len(self.names) == count):
            raise ValueError("parent, kind, axis, origin and names need one entry per joint")
        if np.any(self.parent < 0) or np.any(self.parent > np.arange(count)):
            raise ValueError("each joint's parent body must come before its child (parent[j] <= j)")
        norms = np.linalg.norm(self.axis, axis=1)
        if np.any(~np.isfinite(norms)) or np.any(norms == 0):
            raise ValueError("joint axes must be non-zero finite vectors")
        self.axis = self.axis / norms[:, None]
        # ancestors[b, j]: joint j moves body b (b is joint j's child or below it)
        self.ancestors = np.zeros((count + 1, count), dtype=bool)
        for j in range(count):
            self.ancestors[j + 1] = self.ancestors[self.parent[j]]
            self.ancestors[j + 1, j] = True
        # body frame origins at q = 0: the root's at 0, a child's at its joint's origin
        self.rest_origin = np.concatenate([np.zeros((1, 3)), self.origin])

    @property
    def num_joints(self) -> int:
        return len(self.parent)

    @property
    def num_bodies(self) -> int:
        return len(self.parent) + 1


def with_free_base(tree: JointTree, centre: np.ndarray) -> tuple[JointTree, int]:
    """(tree with six virtual joints first: x, y, z slides, then z, y, x turns through `centre` (3,)
    metres, the root's centre of mass; 6): the object's bodies move up by 6, body 6 is its root."""
    eye = np.eye(3)
    centre = np.asarray(centre, dtype=np.float64).reshape(3)
    parent = np.concatenate([np.arange(6), tree.parent + 6])
    kind = np.concatenate([[PRISMATIC] * 3 + [REVOLUTE] * 3, tree.kind])
    axis = np.concatenate([eye, eye[[2, 1, 0]], tree.axis])
    origin = np.concatenate([np.zeros((3, 3)), np.tile(centre, (3, 1)), tree.origin])
    names = ["base_x", "base_y", "base_z", "base_yaw", "base_pitch", "base_roll", *tree.names]
    return JointTree(parent, kind, axis, origin, names), 6


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (3), broadcast; several times faster than np.cross on small arrays."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 1 and b.ndim == 1:  # two vectors (the recursions' case): no stacking
        return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """(3, 3) rotation by `angle` rad about the unit `axis` (3,) (Rodrigues)."""
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


@dataclass
class BodyStates:
    """Per body (B = J + 1): rotation R (B, 3, 3), frame origin c (B, 3) metres, angular velocity w
    (B, 3) rad/s, origin velocity v (B, 3) m/s, bias accelerations alpha (B, 3) rad/s^2 and a (B, 3)
    m/s^2 (at qddot = 0); per joint: world axis (J, 3) and world origin (J, 3) metres."""

    R: np.ndarray
    c: np.ndarray
    w: np.ndarray
    v: np.ndarray
    alpha: np.ndarray
    a: np.ndarray
    axis: np.ndarray
    origin: np.ndarray


def body_states(tree: JointTree, q: np.ndarray, qdot: np.ndarray) -> BodyStates:
    """Forward kinematics, velocities and bias accelerations of every body at (q, qdot), each (J,)."""
    count = tree.num_joints
    R = np.empty((count + 1, 3, 3))
    R[0] = np.eye(3)
    c, w, v, alpha, a = (np.zeros((count + 1, 3)) for _ in range(5))
    axes, origins = np.empty((count, 3)), np.empty((count, 3))
    for j in range(count):
        p, b = tree.parent[j], j + 1
        axis = R[p] @ tree.axis[j]
        offset = R[p] @ (tree.rest_origin[b] - tree.rest_origin[p])
        rate = qdot[j] * axis
        if tree.kind[j] == REVOLUTE:
            R[b] = R[p] @ rotation(tree.axis[j], q[j])
            w[b] = w[p] + rate
            alpha[b] = alpha[p] + cross(w[p], rate)
            relative = np.zeros(3)
        else:
            offset = offset + q[j] * axis
            R[b], w[b], alpha[b] = R[p], w[p], alpha[p]
            relative = rate
        c[b] = c[p] + offset
        v[b] = v[p] + cross(w[p], offset) + relative
        a[b] = (a[p] + cross(alpha[p], offset) + cross(w[p], cross(w[p], offset))
                + 2.0 * cross(w[p], relative))
        axes[j], origins[j] = axis, c[b]
    return BodyStates(R, c, w, v, alpha, a, axes, origins)


def point_motion(states: BodyStates, body: np.ndarray, local: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points fixed in bodies: body (n,) int, local (n, 3) metres in their body frame at q = 0 (rest
    position minus the body's rest origin). Returns x, xdot and the bias acceleration, (n, 3) each."""
    r = np.einsum("nij,nj->ni", states.R[body], local)
    w = states.w[body]
    x = r + states.c[body]
    xdot = cross(w, r) + states.v[body]
    bias = cross(states.alpha[body], r) + cross(w, cross(w, r)) + states.a[body]
    return x, xdot, bias


def point_jacobian(tree: JointTree, states: BodyStates, body: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dq (n, 3, J) of points x (n, 3) fixed in bodies (n,)."""
    revolute = cross(states.axis[None], x[:, None] - states.origin[None])  # (n, J, 3)
    columns = np.where((tree.kind == REVOLUTE)[None, :, None], revolute, states.axis[None])
    return np.transpose(columns * tree.ancestors[body][:, :, None], (0, 2, 1))
