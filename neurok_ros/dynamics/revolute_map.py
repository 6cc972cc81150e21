"""Closed-form kinematic map of one revolute joint of an articulated dataset instance.

x(q) turns the joint's child parts about the joint axis through its pivot by q radians from the
instance's rest pose (Rodrigues: the part of each point along the axis stays, the perpendicular part
turns); every other part stays put. It needs no learned model, so it exercises the latent dynamics
on real geometry (the demo's falling laptop lid) and gives an exact reference for a learned map.
Also: the physical-pendulum equation of the same rigid body, for an independent check.
"""
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from neurok_ros.dynamics.kinematic_map import KinematicMap


@dataclass
class RevoluteMap:
    """x(q) = offset + cos(q) cos_basis + sin(q) sin_basis, each (n, 3) metres; k_q = 1."""

    offset: torch.Tensor
    cos_basis: torch.Tensor
    sin_basis: torch.Tensor

    def positions_batch(self, q: torch.Tensor) -> torch.Tensor:
        """(..., 1) radians -> (..., n, 3) metres."""
        angle = q[..., :1, None]
        return self.offset + torch.cos(angle) * self.cos_basis + torch.sin(angle) * self.sin_basis

    def kinematic_map(self, masses: torch.Tensor, derivatives: str = "fd") -> KinematicMap:
        """The map for the dynamics. Batched central differences ("fd") are the fastest here."""
        return KinematicMap(self.positions_batch, masses, 1, positions_batch=self.positions_batch,
                            derivatives=derivatives)


def revolute_map(rest_vertices: np.ndarray, part_ids: np.ndarray, joint: dict,
                 dtype: torch.dtype = torch.float64) -> RevoluteMap:
    """The map of `joint` (an instance's joint record: axis, pivot, child_parts) over rest_vertices (n, 3)."""
    if joint.get("type") != "revolute":
        raise ValueError(f"joint {joint.get('name')!r} is {joint.get('type')!r}, not revolute")
    x0 = torch.as_tensor(np.asarray(rest_vertices), dtype=dtype)
    axis = torch.as_tensor(joint["axis"], dtype=dtype)
    axis = axis / torch.linalg.vector_norm(axis)
    pivot = torch.as_tensor(joint["pivot"], dtype=dtype)
    moving = torch.as_tensor(np.isin(np.asarray(part_ids), joint["child_parts"]))[:, None]
    v = x0 - pivot
    along = (v @ axis)[:, None] * axis
    zero = torch.zeros_like(v)
    return RevoluteMap(offset=torch.where(moving, pivot + along, x0),
                       cos_basis=torch.where(moving, v - along, zero),
                       sin_basis=torch.where(moving, torch.linalg.cross(axis.expand_as(v), v), zero))


def pendulum_equation(rmap: RevoluteMap, masses: np.ndarray, gravity: Sequence[float]
                      ) -> Callable[[float, Sequence[float]], list]:
    """f(t, [q, qdot]) of the same rigid body as a physical pendulum: I qddot = -dV/dq.

    I = sum_i m_i |r_i|^2 over the turning points, V = -sum_i m_i g . x_i(q). For scipy's solve_ivp.
    """
    m = np.asarray(masses, dtype=np.float64)
    a = rmap.cos_basis.detach().cpu().numpy().astype(np.float64)
    b = rmap.sin_basis.detach().cpu().numpy().astype(np.float64)
    g = np.asarray(gravity, dtype=np.float64)
    inertia = float(np.sum(m * np.sum(a * a, axis=1)))
    ga, gb = float(np.sum(m * (a @ g))), float(np.sum(m * (b @ g)))

    def f(_, state):
        q, qdot = state
        # dV/dq = -sum m g . (-sin q a + cos q b)
        dv = -(-np.sin(q) * ga + np.cos(q) * gb)
        return [qdot, -dv / inertia]

    return f
