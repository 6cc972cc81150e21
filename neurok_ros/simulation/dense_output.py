"""Frames between solver states: cubic Hermite interpolation of the state (q, qdot).

When the solver step is longer than the frame interval, the solver reports states at its own
nodes and the frames in between are interpolated: q from (q, qdot) at the two nodes around it
(exact derivative data, O(h^4)), qdot from (qdot, qddot) with qddot estimated by second-order
differences of qdot across nodes (O(h^3)). Frames that coincide with nodes are the solver's states.
"""
from __future__ import annotations

import torch


def hermite(t0, t1, y0, y1, d0, d1, t):
    """Cubic Hermite value at times t (F,) on [t0, t1] (each (F,)), ends y (F, k) and slopes d (F, k)."""
    h = (t1 - t0)[:, None]
    s = ((t - t0) / (t1 - t0))[:, None]
    s2, s3 = s * s, s * s * s
    return ((2 * s3 - 3 * s2 + 1) * y0 + (s3 - 2 * s2 + s) * h * d0
            + (-2 * s3 + 3 * s2) * y1 + (s3 - s2) * h * d1)


def interpolate_states(node_times: torch.Tensor, q: torch.Tensor, qdot: torch.Tensor,
                       frame_times: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(q, qdot) at frame_times (F,) from solver nodes: node_times (N,) increasing, q and qdot (N, k).

    Frame times must lie in [node_times[0], node_times[-1]].
    """
    if node_times.numel() == 1:
        return q.expand(frame_times.numel(), -1).clone(), qdot.expand(frame_times.numel(), -1).clone()
    edge = 2 if node_times.numel() > 2 else 1
    qddot = torch.gradient(qdot, spacing=(node_times,), dim=0, edge_order=edge)[0]
    index = torch.clamp(torch.searchsorted(node_times, frame_times, right=True) - 1, 0, node_times.numel() - 2)
    t0, t1 = node_times[index], node_times[index + 1]
    q_f = hermite(t0, t1, q[index], q[index + 1], qdot[index], qdot[index + 1], frame_times)
    v_f = hermite(t0, t1, qdot[index], qdot[index + 1], qddot[index], qddot[index + 1], frame_times)
    exact = torch.isclose(frame_times[:, None], node_times[None, :], rtol=0.0, atol=1e-12)
    hit = exact.any(1)
    if hit.any():
        where = exact.float().argmax(1)[hit]
        q_f[hit], v_f[hit] = q[where], qdot[where]
    return q_f, v_f
