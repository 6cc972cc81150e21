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

With the bank chart and one mode, the map is instead a polynomial in sqrt(|q|) on each side of q = 0
(RootPolynomialMap: the chart is x ~ x_0 + a s + b s^(1 + 1/p) on each side), fitted to a grid
uniform in sqrt(|q|) from ROOT_NEAREST times `radius` out to `radius`; a refinement refits the grid
out past the solver's farthest state. The chart's deformation coordinates, if any, enter linearly
(RootPlusLinearMap: the displacement they make per unit q, as in the decoder map). `even` keeps
only the integer powers of |q|: the map's slope at q = 0 is then the trend of the motion beyond
ROOT_NEAREST, where with the odd powers it is left to the fit's balance of w^2 against w^3 (a
contact velocity fitted there turned a door the wrong way; docs/physics.md).

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
from neurok_ros.dynamics.root_plus_linear_map import RootPlusLinearMap, root_plus_linear_kinematic_map
from neurok_ros.dynamics.root_polynomial_map import RootPolynomialMap, fit_root_polynomial_map, root_kinematic_map

DECODE_BATCH = 256  # latents per decoder call while sampling
SOLVER_DEVICE = torch.device("cpu")
FARTHEST = 4.0  # refits ignore solver states beyond this many fit radii
ROOT_SAMPLES = 3  # root form: samples per side per coefficient
ROOT_MARGIN = 1.25  # root form: a refit's grid reaches this far past the farthest solver state
ROOT_NEAREST = 0.01  # root form: the grid starts at this fraction of the radius. Closer to q = 0 the decoder
                     # has a small term linear in the latent step (x ~ sqrt(q): under 0.2 mm at q = 1e-4),
                     # which the chart's w^2 start is not meant to follow (docs/physics.md)


@dataclass
class Surrogate:
    """kmap: the polynomial as a KinematicMap (same masses as the decoder's map); pmap: the
    polynomial; q (S, k) and x (S, n, 3) metres: the decoded samples it was fitted to; seconds:
    time spent decoding and fitting."""

    kmap: KinematicMap
    pmap: PolynomialMap | RootPolynomialMap | RootPlusLinearMap
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


def _fit_root(decoder: KinematicMap, degree: int, radius: float, started: float, even: bool,
              linear: torch.Tensor | None = None) -> Surrogate:
    """The root form (module docstring): q = 0 and a grid uniform in w = sqrt(|q_0| / radius) on each
    side; degree: the largest power of q_0 (w^(2 degree)); even: integer powers of |q_0| only. A
    decoder map with more coordinates (the bank chart's deformation coordinates) gets them as a
    RootPlusLinearMap with `linear` (3n, r), the displacement they add per unit q (the decoder map
    adds exactly that)."""
    count = ROOT_SAMPLES * (2 * degree - 1)
    w = torch.linspace(ROOT_NEAREST ** 0.5, 1.0, count + 1, dtype=torch.float64)[1:]
    grid = torch.cat([torch.zeros(1, dtype=torch.float64), radius * w ** 2, -radius * w ** 2])
    q = torch.zeros(len(grid), decoder.num_coords, dtype=decoder.dtype, device=decoder.masses.device)
    q[:, 0] = grid.to(q)
    x = decode_samples(decoder, q)
    rmap = fit_root_polynomial_map(q[:, :1], x, 2 * degree, radius, device=SOLVER_DEVICE, even_only=even)
    masses = decoder.masses.to(SOLVER_DEVICE)
    if decoder.num_coords == 1:
        return Surrogate(root_kinematic_map(rmap, masses), rmap, q, x, time.perf_counter() - started)
    if linear is None or linear.shape[1] != decoder.num_coords - 1:
        raise ValueError(f"a root form with {decoder.num_coords - 1} deformation coordinates needs their "
                         f"displacement per unit q (3n, {decoder.num_coords - 1})")
    hmap = RootPlusLinearMap(rmap, linear.to(SOLVER_DEVICE, torch.float64))
    return Surrogate(root_plus_linear_kinematic_map(hmap, masses), hmap, q, x, time.perf_counter() - started)


def fit_surrogate(decoder: KinematicMap, degree: int, radius: float, seed: int = 0,
                  oversampling: float = 1.5, root: bool = False, even: bool = False,
                  linear: torch.Tensor | None = None) -> Surrogate:
    """Fit the polynomial to q = 0 and oversampling * P samples in the ball of `radius`; root: the
    root form of a one-mode bank chart instead (in q_0; the others linear, `linear` (3n, r) metres
    per unit q), with only integer powers of |q_0| when `even` (module docstring)."""
    started = time.perf_counter()
    if root:
        return _fit_root(decoder, degree, radius, started, even, linear)
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
    if isinstance(surrogate.pmap, (RootPolynomialMap, RootPlusLinearMap)):
        farthest = float(states[:, 0].abs().max()) if len(states) else 0.0
        return _fit_root(decoder, surrogate.pmap.degree // 2, max(surrogate.pmap.scale, ROOT_MARGIN * farthest),
                         started, surrogate.pmap.even_only, getattr(surrogate.pmap, "linear", None))
    noise = torch.as_tensor(rng.normal(scale=spread, size=(len(states), per_state, states.shape[1])),
                            dtype=states.dtype, device=states.device)
    extra = torch.cat([states, (states[:, None, :] + noise).reshape(-1, states.shape[1])])
    q = torch.cat([surrogate.q, extra])
    x = torch.cat([surrogate.x, decode_samples(decoder, extra)])
    radius = max(surrogate.pmap.scale, float(torch.linalg.vector_norm(q, dim=1).max()))
    return _fit(decoder, q, x, surrogate.pmap.degree, radius, started)


def frame_error(decoder: KinematicMap, pmap: PolynomialMap | RootPolynomialMap | RootPlusLinearMap, q: torch.Tensor,
                points: int) -> dict:
    """The polynomial against the decoder at states q (T, k), over the first `points` (mass-carrying)
    points: RMS and max distance, metres."""
    exact = decode_samples(decoder, q.to(decoder.masses.device))[:, :points].cpu()
    with torch.no_grad():
        distance = torch.linalg.vector_norm(pmap.positions(q.to(SOLVER_DEVICE))[:, :points].cpu() - exact, dim=-1)
    return {"rms_m": float(distance.pow(2).mean().sqrt()), "max_m": float(distance.max())}
