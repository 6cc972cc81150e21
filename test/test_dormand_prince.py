"""The lean Dormand-Prince integrator against closed forms and torchdiffeq's dopri5."""
import math

import numpy as np
import pytest
import torch
from torchdiffeq import odeint

from neurok_ros.dynamics.dormand_prince import dormand_prince

pytestmark = pytest.mark.unit

DT = torch.float64


def _oscillator(omega: float):
    def f(t, y):
        return np.array([y[1], -omega * omega * y[0]])
    return f


def test_harmonic_oscillator_to_tolerance_at_requested_times():
    """x'' = -w^2 x over 5 periods, outputs between and on steps (dense output): error ~ tolerance."""
    omega = 2 * math.pi
    times = np.linspace(0.0, 5.0, 37)  # not aligned with any step
    y = dormand_prince(_oscillator(omega), np.array([1.0, 0.0]), times, rtol=1e-9, atol=1e-12)
    assert y.shape == (37, 2) and y.dtype == np.float64
    exact = np.stack([np.cos(omega * times), -omega * np.sin(omega * times)], axis=1)
    assert np.abs(y - exact).max() < 1e-6
    loose = dormand_prince(_oscillator(omega), np.array([1.0, 0.0]), times, rtol=1e-4, atol=1e-7)
    assert 1e-7 < np.abs(loose - exact)[:, 0].max() < 2e-2  # coarser, and it shows


def test_agrees_with_torchdiffeq_dopri5():
    def f(t, y):
        return torch.stack([y[1], -torch.sin(y[0]) - 0.1 * y[1] + 0.3 * math.cos(1.3 * float(t))])

    times = torch.linspace(0.0, 20.0, 201, dtype=DT)
    y0 = torch.tensor([2.5, 0.0], dtype=DT)
    ours = dormand_prince(lambda t, y: f(t, torch.from_numpy(y)).numpy(), y0.numpy(), times.numpy(), rtol=1e-8,
                          atol=1e-10)
    theirs = odeint(f, y0, times, method="dopri5", rtol=1e-8, atol=1e-10)
    assert np.abs(ours - theirs.numpy()).max() < 1e-5


def test_stiff_blow_up_is_an_error():
    def f(t, y):
        return y * y  # y' = y^2 from 1: blows up at t = 1

    with pytest.raises(RuntimeError, match="underflow|steps"):
        dormand_prince(f, np.array([1.0]), np.array([0.0, 2.0]), rtol=1e-6, atol=1e-9,
                       max_steps=20000)
