"""The learned kinematic map replaced, for the solver only, by a polynomial fitted to it.

The decoder runs where the model is; the polynomial and the solve always run on the CPU: a right-hand
side is a few dozen operations on tensors of a few thousand numbers, which a GPU runs slower than one
CPU core (kernel launches; measured on an H200: 2.5 s against 2.0 s on its 16-core host).

Every right-hand side of the exact solver runs the attention decoder on 2 k + 3 latents (about
11 ms on 2 CPU cores), and an adaptive solve needs about a thousand of them. The simulated
coordinates are few (k_sim <= 6), so the map q -> x(q) of the simulation points is fitted instead
by a polynomial of degree `degree` (PolynomialMap):

1. samples: q = 0 (weighted so that the rest pose is reproduced) and 1.5 P points uniform in the ball
   of radius `radius` (latent units; the prior has unit variance), decoded in one batched pass;
2. solve the Euler-Lagrange equations on the polynomial (exact derivatives, no difference noise;
   with fixed rk4 steps of at most 1/60 s when a refinement follows: that solve only shows where to
   sample);
3. refine (`refinements` times): add the solver's states and `per_state` Gaussian perturbations of
   each (standard deviation `spread`), refit, solve again.

The frames are then decoded by the real decoder at the solver's q(t), and `frame_error` compares
the decoder with the polynomial at those states: the surrogate's own accuracy, reported with every
prediction. docs/physics.md compares surrogate and decoder trajectories.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from neurok_ros.dynamics.kinematic_map import KinematicMap, batch_positions
from neurok_ros.dynamics.polynomial_map import (
    PolynomialMap,
    fit_polynomial_map,
    monomial_exponents,
    polynomial_kinematic_map,
)

DECODE_BATCH = 256  # latents per decoder call while sampling
SOLVER_DEVICE = torch.device("cpu")
FARTHEST = 4.0  # refits ignore solver states beyond this many fit radii


@dataclass
class Surrogate:
    """kmap: the polynomial as a KinematicMap (same masses as the decoder's map); pmap: the
    polynomial; q (S, k) and x (S, n, 3) metres: the decoded samples it was fitted to; seconds:
    time spent decoding and fitting."""

    kmap: KinematicMap
    pmap: PolynomialMap
    q: torch.Tensor
    x: torch.Tensor
    seconds: float


def ball_samples(count: int, num_coords: int, radius: float, generator: np.random.Generator) -> np.ndarray:
    """(count, k) points uniform in the ball of `radius`."""
    direction = generator.normal(size=(count, num_coords))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return direction * (radius * generator.random(count) ** (1.0 / num_coords))[:, None]


def decode_samples(kmap: KinematicMap, q: torch.Tensor) -> torch.Tensor:
    """x (S, n, 3) metres of the decoder's map at q (S, k), in batches of DECODE_BATCH."""
    with torch.no_grad():
        return torch.cat([batch_positions(kmap, q[i:i + DECODE_BATCH]) for i in range(0, len(q), DECODE_BATCH)])


def _fit(decoder: KinematicMap, q: torch.Tensor, x: torch.Tensor, degree: int, radius: float,
         started: float) -> Surrogate:
    weights = torch.ones(len(q), dtype=torch.float64)
    weights[0] = float(len(q))  # q = 0 comes first: the rest pose, nearly interpolated
    pmap = fit_polynomial_map(q, x, degree, scale=radius, weights=weights, device=SOLVER_DEVICE)
    return Surrogate(polynomial_kinematic_map(pmap, decoder.masses.to(SOLVER_DEVICE)), pmap, q, x,
                     time.perf_counter() - started)


def fit_surrogate(decoder: KinematicMap, degree: int, radius: float, seed: int = 0,
                  oversampling: float = 1.5) -> Surrogate:
    """Fit the polynomial to q = 0 and oversampling * P samples in the ball of `radius`."""
    started = time.perf_counter()
    k = decoder.num_coords
    count = int(np.ceil(oversampling * len(monomial_exponents(k, degree))))
    points = ball_samples(count, k, radius, np.random.default_rng(seed))
    q = torch.as_tensor(np.concatenate([np.zeros((1, k)), points]), dtype=decoder.dtype,
                        device=decoder.masses.device)
    return _fit(decoder, q, decode_samples(decoder, q), degree, radius, started)


def refine_surrogate(decoder: KinematicMap, surrogate: Surrogate, states: torch.Tensor, spread: float = 0.5,
                     per_state: int = 4, seed: int = 1) -> Surrogate:
    """Refit with extra samples at the solver's states (T, k) and per_state perturbations of each."""
    started = time.perf_counter() - surrogate.seconds
    rng = np.random.default_rng(seed)
    states = states.detach().to(surrogate.q)
    # a locating solve that blew up leaves far or non-finite states: they are no region to sample
    keep = torch.isfinite(states).all(1) & (torch.linalg.vector_norm(states, dim=1) <= FARTHEST * surrogate.pmap.scale)
    states = states[keep]
    noise = torch.as_tensor(rng.normal(scale=spread, size=(len(states), per_state, states.shape[1])),
                            dtype=states.dtype, device=states.device)
    extra = torch.cat([states, (states[:, None, :] + noise).reshape(-1, states.shape[1])])
    q = torch.cat([surrogate.q, extra])
    x = torch.cat([surrogate.x, decode_samples(decoder, extra)])
    radius = max(surrogate.pmap.scale, float(torch.linalg.vector_norm(q, dim=1).max()))
    return _fit(decoder, q, x, surrogate.pmap.degree, radius, started)


def frame_error(decoder: KinematicMap, pmap: PolynomialMap, q: torch.Tensor, points: int) -> dict:
    """The polynomial against the decoder at states q (T, k), over the first `points` (mass-carrying)
    points: RMS and max distance, metres."""
    exact = decode_samples(decoder, q.to(decoder.masses.device))[:, :points].cpu()
    with torch.no_grad():
        distance = torch.linalg.vector_norm(pmap.positions(q.to(SOLVER_DEVICE))[:, :points].cpu() - exact, dim=-1)
    return {"rms_m": float(distance.pow(2).mean().sqrt()), "max_m": float(distance.max())}
