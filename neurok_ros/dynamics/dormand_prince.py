"""A lean adaptive Dormand-Prince 5(4) integrator for small states (method "dp45"), in float64 NumPy.

torchdiffeq's dopri5 costs about 0.4 ms of its own bookkeeping per right-hand side on the CPU
(measured on the polynomial map's 10-number state: 0.89 ms per right-hand side in all, of which the
right-hand side itself is 0.46 ms). For a state of a dozen numbers everything but the right-hand
side can be a handful of array operations per step: the stages are rows of one (7, d) array, each
stage input is one matrix-vector product with a row of the Butcher tableau, the error estimate is
another, and step acceptance is one scalar. The state is a NumPy vector because torch's dispatch
(about 10 us per operation) would cost more than the arithmetic; a torch right-hand side is wrapped
by the caller (integrate.py). Same method as dopri5 (Dormand & Prince 1980: fifth
order, embedded fourth-order error estimate, first-same-as-last), the usual step-size controller,
and cubic Hermite dense output from the step's end values and slopes (fourth-order accurate) at
the requested times.

    y = dormand_prince(f, y0, t, rtol=1e-4, atol=1e-6)   # (T, d) float64 at the times t (T,)
    # f(t: float, y: (d,) float64 ndarray) -> (d,) ndarray
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

# Butcher tableau: nodes C, stage coefficients A (row i builds stage i from stages 0..i-1), the
# fifth-order weights B5 (= the last row of A: first same as last) and the fourth-order weights B4.
C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
B5 = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
SAFETY, SHRINK_MIN, GROW_MAX = 0.9, 0.2, 10.0


def _rms(x: np.ndarray) -> float:
    return math.sqrt(float(np.dot(x, x)) / x.size)


def initial_step(func: Callable, t0: float, y0: np.ndarray, f0: np.ndarray, rtol: float, atol: float) -> float:
    """Hairer, Norsett & Wanner's starting step for a fifth-order method (one extra evaluation)."""
    scale = atol + rtol * np.abs(y0)
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    f1 = func(t0 + h0, y0 + h0 * f0)
    d2 = _rms((f1 - f0) / scale) / h0
    h1 = max(1e-6, h0 * 1e-3) if max(d1, d2) <= 1e-15 else (0.01 / max(d1, d2)) ** 0.2
    return min(100.0 * h0, h1)


def _hermite(t0: float, h: float, y0, y1, f0, f1, t: float) -> np.ndarray:
    """Cubic Hermite interpolation on [t0, t0 + h] from end values and slopes."""
    s = (t - t0) / h
    s2, s3 = s * s, s * s * s
    return ((2 * s3 - 3 * s2 + 1) * y0 + (s3 - 2 * s2 + s) * h * f0 + (-2 * s3 + 3 * s2) * y1
            + (s3 - s2) * h * f1)


def dormand_prince(func: Callable[[float, np.ndarray], np.ndarray], y0, t, rtol: float = 1e-6, atol=1e-8,
                   max_steps: int = 1_000_000) -> np.ndarray:
    """Solve dy/dt = func(t, y) from y(t[0]) = y0 (d,); returns (T, d) float64 at the increasing
    times t (T,). func receives t as a Python float and y as a (d,) float64 array.

    Error control per step: RMS over components of err / (atol + rtol max(|y_n|, |y_n+1|)) <= 1;
    atol: a number, or one per component (d,).
    Raises RuntimeError when the step size underflows or max_steps is exceeded (a stiff or
    diverging problem)."""
    times = [float(v) for v in np.asarray(t, dtype=np.float64).reshape(-1)]
    y = np.array(y0, dtype=np.float64).reshape(-1)
    tableau = np.zeros((7, 7))
    for i, row in enumerate(A):
        tableau[i, :len(row)] = row
    error_weights = np.array([b5 - b4 for b5, b4 in zip(B5, B4)])
    out = np.empty((len(times), y.size))
    out[0] = y
    t_now = times[0]
    stages = np.empty((7, y.size))
    stages[0] = func(t_now, y)
    h = initial_step(func, t_now, y, stages[0], rtol, atol)
    end, next_out, steps = times[-1], 1, 0
    while next_out < len(times):
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"dormand_prince: more than {max_steps} steps before t = {end}")
        h = min(h, end - t_now)
        if h <= 16 * math.ulp(max(abs(t_now), 1.0)):
            raise RuntimeError(f"dormand_prince: step size underflow at t = {t_now}")
        for i in range(1, 7):
            stage_y = y + h * (tableau[i, :i] @ stages[:i])
            stages[i] = func(t_now + C[i] * h, stage_y)
        y_new = stage_y  # the seventh stage's input is the fifth-order solution (FSAL)
        error = h * (error_weights @ stages)
        ratio = _rms(error / (atol + rtol * np.maximum(np.abs(y), np.abs(y_new))))
        if not math.isfinite(ratio):
            ratio = math.inf  # a non-finite stage: shrink the step
        if ratio <= 1.0:
            t_new = t_now + h
            while next_out < len(times) and times[next_out] <= t_new + 1e-12 * max(1.0, abs(t_new)):
                target = times[next_out]
                out[next_out] = y_new if target >= t_new else _hermite(t_now, h, y, y_new, stages[0], stages[6],
                                                                         target)
                next_out += 1
            t_now, y = t_new, y_new
            stages[0] = stages[6]
        factor = GROW_MAX if ratio == 0.0 else min(GROW_MAX, max(SHRINK_MIN, SAFETY * ratio ** -0.2))
        h = h * (min(factor, 1.0) if ratio > 1.0 else factor)
    return out
