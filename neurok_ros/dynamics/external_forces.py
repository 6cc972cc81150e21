"""External point forces at contacts: a push over a time window and a drag along a path.

Each force is piecewise smooth in time; its breakpoints (window edges, path knots) split the
integration into segments so a fixed-step solver never straddles a jump. Inside a segment the
force's branch is picked by the segment midpoint `t_mid`, the value by the current time t.
Forces are newtons at the contacts; they enter the equations as J_c^T f.
"""
import bisect
from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np
import torch

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.dynamics.contacts import Contacts, contact_jacobian, contact_positions


@dataclass
class PushForce:
    """Constant forces (C, 3) newtons at the contacts, on for t0 <= t <= t1 seconds."""

    contacts: Contacts
    force: torch.Tensor
    t0: float
    t1: float

    def __post_init__(self):
        if not self.t1 >= self.t0:
            raise ValueError(f"push window must have t1 >= t0, got [{self.t0}, {self.t1}]")
        self.force = torch.as_tensor(self.force).reshape(self.contacts.num_contacts, 3)
        self._force_array = self.force.double().cpu().numpy()  # for the NumPy right-hand side

    def breakpoints(self) -> List[float]:
        return [float(self.t0), float(self.t1)]

    def contact_forces(self, t, t_mid: float, x_c, v_c):
        """(C, 3) newtons: the push inside its window, zero outside; a NumPy array for NumPy x_c."""
        inside = self.t0 <= t_mid <= self.t1
        if isinstance(x_c, np.ndarray):
            return self._force_array if inside else np.zeros_like(x_c)
        return self.force.to(x_c.dtype).to(x_c.device) if inside else torch.zeros_like(x_c)


@dataclass
class DragForce:
    """Spring-damper pulling each contact toward a piecewise-linear path.

    f = k (p(t) - x_c) - c (v_c - p'(t)); path_times (P,) s strictly increasing; path_positions
    (P, C, 3) metres; stiffness k N/m; damping c N s/m. Before the first knot the path holds its
    first point, after the last its last point.
    """

    contacts: Contacts
    path_times: Sequence[float]
    path_positions: torch.Tensor
    stiffness: float
    damping: float = 0.0

    def __post_init__(self):
        self.path_times = [float(t) for t in np.asarray(self.path_times, dtype=np.float64).reshape(-1)]
        self.path_positions = torch.as_tensor(self.path_positions)
        if self.path_positions.shape != (len(self.path_times), self.contacts.num_contacts, 3):
            raise ValueError(f"path_positions must be (P={len(self.path_times)}, "
                             f"C={self.contacts.num_contacts}, 3), got {tuple(self.path_positions.shape)}")
        if np.any(np.diff(self.path_times) <= 0):
            raise ValueError("drag path times must be strictly increasing")
        self._path_array = self.path_positions.double().cpu().numpy()  # for the NumPy right-hand side

    def breakpoints(self) -> List[float]:
        return list(self.path_times)

    def target(self, t, t_mid: float, like):
        """Path point p(t) and velocity p'(t), (C, 3) each, on the segment holding t_mid; NumPy
        arrays when `like` is one, else tensors of its dtype and device."""
        if isinstance(like, np.ndarray):
            path = self._path_array
        else:
            path = self.path_positions.to(like.dtype).to(like.device)
        return path_target(self.path_times, path, t, t_mid)

    def contact_forces(self, t, t_mid: float, x_c, v_c):
        """(C, 3) newtons (tensors, or NumPy arrays for NumPy x_c and v_c)."""
        p, pdot = self.target(t, t_mid, x_c)
        return self.stiffness * (p - x_c) - self.damping * (v_c - pdot)


def path_target(times: Sequence[float], path, t, t_mid: float):
    """p(t) and p'(t), (C, 3) each, of the piecewise-linear path (P, C, 3) (a torch tensor or a NumPy
    array) through knots at `times` (P,) s, on the segment holding t_mid; held before the first
    knot and after the last."""
    s = bisect.bisect_right(times, t_mid) - 1
    if s < 0:
        return path[0], 0.0 * path[0]
    if s >= len(times) - 1:
        return path[-1], 0.0 * path[-1]
    slope = (path[s + 1] - path[s]) / (times[s + 1] - times[s])
    return path[s] + (t - times[s]) * slope, slope


def drag_from_conditions(conditions: ContactConditions, contacts: Contacts, start: torch.Tensor,
                         stiffness: float, damping: float) -> Optional[DragForce]:
    """The drag of a ContactConditions path, or None without a path.

    start: (C, 3) metres, where the contacts are at t = 0; when the path's first time is after 0,
    (0, start) is prepended so the target moves off from the contacts instead of jumping.
    """
    conditions.validate()
    if not conditions.has_path:
        return None
    times = conditions.path_times
    pos = torch.as_tensor(conditions.path_positions, dtype=start.dtype, device=start.device)
    if times[0] > 0:
        times = np.concatenate([[0.0], times])
        pos = torch.cat([start[None], pos])
    return DragForce(contacts, times, pos, stiffness, damping)


def external_generalised_force(forces: Sequence, t, t_mid: float, x: torch.Tensor, jacobian: torch.Tensor,
                               qdot: torch.Tensor) -> torch.Tensor:
    """Sum of J_c^T f over all external forces, (k_q,). x: (n, 3); jacobian: (3n, k_q); qdot: (k_q,)."""
    total = torch.zeros_like(qdot)
    for force in forces:
        jc = contact_jacobian(force.contacts, jacobian)
        x_c = contact_positions(force.contacts, x)
        v_c = (jc @ qdot).reshape(-1, 3)
        f = force.contact_forces(t, t_mid, x_c, v_c)
        total = total + jc.T @ f.reshape(-1)
    return total
