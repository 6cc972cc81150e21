"""Time integration of the latent Euler–Lagrange equations with torchdiffeq, and energy per frame.

Method "dp45" (dormand_prince.py) steps a float64 NumPy state; on a polynomial map its right-hand
side is the NumPy one of polynomial_rhs.py, otherwise lagrangian.py's torch one, wrapped. torchdiffeq
methods get the torch right-hand side (or the NumPy one wrapped, on a polynomial map).

The time span is split at the breakpoints of the external forces (push windows, drag-path knots)
so that no step straddles a jump. Fixed-step methods (rk4, ...) use a grid that contains every
output time and sub-steps of at most `step_size`, so frames are solver states, never interpolated.
Energies are computed after the solve in one batched pass over the frames.
"""
import math
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import numpy as np
import torch
from torchdiffeq import odeint

from neurok_ros.dynamics.dormand_prince import dormand_prince
from neurok_ros.dynamics.kinematic_map import positions_and_velocities, resolved_method
from neurok_ros.dynamics.lagrangian import LagrangianSystem, pack_state, state_derivative, unpack_state
from neurok_ros.dynamics.polynomial_rhs import numpy_state_derivative
from neurok_ros.dynamics.potentials import potential_energy
from neurok_ros.errors import Cancelled

FIXED_STEP = ("rk4", "euler", "midpoint", "explicit_adams", "implicit_adams")


@dataclass
class Trajectory:
    """Solution at the output times; T frames, k_q coordinates, n simulation points.

    times (T,) s; q, qdot (T, k_q); points (T, n, 3) metres; kinetic, potential, total (T,) joules;
    work (T,) joules done by the external forces since t_0; dissipated (T,) joules removed by
    damping since t_0; rhs_evaluations: right-hand sides evaluated; seconds: wall time of the solve.
    """

    times: torch.Tensor
    q: torch.Tensor
    qdot: torch.Tensor
    points: torch.Tensor
    kinetic: torch.Tensor
    potential: torch.Tensor
    total: torch.Tensor
    work: torch.Tensor
    dissipated: torch.Tensor
    rhs_evaluations: int
    seconds: float

    def energy(self) -> torch.Tensor:
        """(T, 3): kinetic, potential, total, joules."""
        return torch.stack([self.kinetic, self.potential, self.total], dim=1)

    def energy_drift(self) -> float:
        """max_t |E_t - E_0 - W_t + D_t| over the energy exchanged (max of T, |V - V_0|, |W|, D).

        0 for an exact solver; the balance includes external work W and damping loss D, so it is
        meaningful with forces and damping too.
        """
        balance = self.total - self.total[0] - self.work + self.dissipated
        scale = torch.stack([self.kinetic.abs().max(), (self.potential - self.potential[0]).abs().max(),
                             self.work.abs().max(), self.dissipated.abs().max()]).max()
        scale = torch.clamp(scale, min=torch.finfo(scale.dtype).tiny)
        return float(balance.abs().max() / scale)


def _grid_with_substeps(step_size: float):
    """torchdiffeq grid constructor: every output time, sub-steps of at most step_size between them."""
    def construct(func, y0, t: torch.Tensor) -> torch.Tensor:
        pieces = [t[:1]]
        for a, b in zip(t[:-1], t[1:]):
            count = max(1, math.ceil(float(b - a) / step_size - 1e-3))
            pieces.append(torch.linspace(float(a), float(b), count + 1, dtype=t.dtype, device=t.device)[1:])
        grid = torch.cat(pieces)
        grid[-1] = t[-1]
        return grid

    return construct


def _segment_rhs(system: LagrangianSystem, fast, numpy_state: bool, t_mid: float, dtype, device):
    """f(t, y) -> dy/dt on the segment with midpoint t_mid: y a float64 NumPy vector for dp45
    (numpy_state), else a tensor of dtype on device; from polynomial_rhs's NumPy right-hand side
    `fast` when there is one, else lagrangian.py's torch one."""
    if fast is not None:
        if numpy_state:
            return lambda t, y: fast(t, t_mid, y)
        return lambda t, y: torch.as_tensor(fast(float(t), t_mid, y.double().cpu().numpy()), dtype=dtype,
                                            device=device)
    rhs = state_derivative(system, t_mid)
    if numpy_state:
        return lambda t, y: rhs(t, torch.as_tensor(y, dtype=dtype, device=device)).double().cpu().numpy()
    return rhs


def _segments(system: LagrangianSystem, start: float, end: float) -> List[float]:
    cuts = {float(b) for force in system.forces for b in force.breakpoints() if start < b < end}
    return [start] + sorted(cuts) + [end]


def simulate(system: LagrangianSystem, q0: torch.Tensor, qdot0: torch.Tensor, t_eval: Sequence[float],
             method: str = "rk4", step_size: Optional[float] = 1.0 / 60.0, rtol: float = 1e-6,
             atol: float = 1e-8, should_stop: Optional[Callable[[], bool]] = None,
             progress: Optional[Callable[[float], None]] = None) -> Trajectory:
    """Integrate from (q0, qdot0) at t_eval[0] and report every t_eval.

    q0, qdot0: (k_q,) generalised coordinates and velocities (their dtype is used throughout);
    t_eval: (T,) increasing seconds; method: any torchdiffeq method, "rk4" (fixed step, step_size
    seconds, None = one step per frame) or "dopri5" (adaptive, rtol/atol) in particular, or "dp45":
    the same Dormand-Prince pair without torchdiffeq's per-step overhead (dormand_prince.py).
    should_stop() (when given) is asked at every right-hand-side evaluation (each step of every
    method), and Cancelled raised once it returns True; progress (when given) is called there with
    (t - t_eval[0]) / (t_eval[-1] - t_eval[0]), the fraction of the time span (it may step back a
    little after an adaptive method rejects a step).
    """
    times = torch.as_tensor(t_eval, dtype=q0.dtype, device=q0.device).reshape(-1)
    if times.numel() < 1 or torch.any(times[1:] <= times[:-1]):
        raise ValueError("t_eval must be a non-empty, strictly increasing sequence of times")
    k = system.num_coords
    resolved_method(system.kmap)
    options = {}
    if method in FIXED_STEP and step_size is not None:
        options["grid_constructor"] = _grid_with_substeps(float(step_size))
    evaluations = 0
    t_start, span = float(times[0]), max(float(times[-1] - times[0]), 1e-300)
    started = time.perf_counter()
    fast = numpy_state_derivative(system)
    dtype, device = q0.dtype, q0.device
    # a diverging solve (e.g. a locating solve on a first, coarse surrogate) ends in inf / NaN states,
    # which the caller checks; NumPy would warn on every step on the way
    with torch.no_grad(), np.errstate(over="ignore", invalid="ignore"):
        y = pack_state(q0, qdot0)
        states = [None] * times.numel()
        states[0] = y
        edges = _segments(system, float(times[0]), float(times[-1]))
        for a, b in zip(edges[:-1], edges[1:]):
            if b <= a:
                continue
            inside = [i for i in range(times.numel()) if a < float(times[i]) < b]
            seg_t = torch.cat([times.new_tensor([a]), times[inside], times.new_tensor([b])])
            t_mid = 0.5 * (a + b)
            step_rhs = _segment_rhs(system, fast, method == "dp45", t_mid, dtype, device)

            def counted(t, state, step_rhs=step_rhs):
                nonlocal evaluations
                if should_stop is not None and should_stop():
                    raise Cancelled(f"the simulation was stopped at t = {float(t):.4f} s")
                if progress is not None:
                    progress((float(t) - t_start) / span)
                evaluations += 1
                return step_rhs(t, state)

            if method == "dp45":
                solution = torch.as_tensor(dormand_prince(counted, y.double().cpu().numpy(),
                                                          seg_t.double().cpu().numpy(), rtol=rtol, atol=atol),
                                           dtype=dtype, device=device)
            else:
                solution = odeint(counted, y, seg_t, method=method, rtol=rtol, atol=atol, options=options)
            for j, i in enumerate(inside):
                states[i] = solution[j + 1]
            y = solution[-1]
            for i in range(times.numel()):
                if float(times[i]) == b:
                    states[i] = y
        seconds = time.perf_counter() - started
        q, qdot, work, dissipated = unpack_state(torch.stack(states), k)
        x, xdot = positions_and_velocities(system.kmap, q, qdot)
        masses = system.kmap.masses
        kinetic = 0.5 * torch.einsum("n,tnd,tnd->t", masses, xdot, xdot)
        potential = potential_energy(system.potentials, x, q, masses)
    return Trajectory(times=times, q=q, qdot=qdot, points=x, kinetic=kinetic, potential=potential,
                      total=kinetic + potential, work=work, dissipated=dissipated,
                      rhs_evaluations=evaluations, seconds=seconds)
