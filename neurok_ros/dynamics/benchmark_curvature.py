"""Micro-benchmark: the velocity term by explicit Christoffel symbols vs by forward AD.

Both compute J^T diag(m) d2x[qdot, qdot] from scratch at one state of a small attention decoder
(K latent tokens, n query points cross-attending to them, explicit matmul + softmax so forward AD
passes through): the Christoffel form builds dM/dq (k_q^3) by nested jacfwd; the AD form takes J
by jacfwd and d2x by jvp of jvp. Run: python -m neurok_ros.dynamics.benchmark_curvature
"""
import math
import time
from dataclasses import dataclass
from typing import Callable, Dict

import torch
from torch import nn

from neurok_ros.dynamics.christoffel import curvature_term_christoffel
from neurok_ros.dynamics.curvature import curvature_force, curvature_term_ad, second_derivative_ad
from neurok_ros.dynamics.kinematic_map import KinematicMap, expand_fd


class TinyAttentionDecoder(nn.Module):
    """q (k_q,) -> (n, 3) metres: z = mu + A q as K tokens; queries cross-attend; an MLP adds offsets."""

    def __init__(self, num_coords: int, num_points: int = 256, tokens: int = 16, token_dim: int = 8,
                 width: int = 64, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.tokens, self.token_dim, self.width = tokens, token_dim, width
        latent = tokens * token_dim
        basis, _ = torch.linalg.qr(torch.randn(latent, num_coords, generator=gen))
        self.register_buffer("mu", torch.randn(latent, generator=gen))
        self.register_buffer("basis", basis)
        self.register_buffer("points", torch.rand(num_points, 3, generator=gen) - 0.5)
        self.embed = nn.Linear(3, width)
        self.key = nn.Linear(token_dim, width)
        self.value = nn.Linear(token_dim, width)
        self.query = nn.Linear(width, width)
        self.head = nn.Sequential(nn.Linear(2 * width, width), nn.GELU(), nn.Linear(width, 3))

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        z = (self.mu + self.basis @ q).reshape(self.tokens, self.token_dim)
        h = self.embed(self.points)
        scores = self.query(h) @ self.key(z).T / math.sqrt(self.width)
        att = torch.softmax(scores, dim=-1) @ self.value(z)
        return self.points + 0.1 * self.head(torch.cat([h, att], dim=-1))


def _interleaved_best(functions: Dict[str, Callable[[], object]], repeats: int) -> Dict[str, float]:
    """Best wall seconds of each function, run in turn `repeats` times after one warm-up each.

    Interleaving and taking the best keeps the ratio fair when other processes share the cores.
    """
    for fn in functions.values():
        fn()
    best = {name: math.inf for name in functions}
    for _ in range(repeats):
        for name, fn in functions.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


@dataclass
class CurvatureProblem:
    """One random state of a random attention decoder, and the four ways to get the curvature term.

    functions: "christoffel", "ad", "ad_given_j", "fd" -> callables; reference / fast: the Christoffel
    and AD results (float32)."""

    decoder: torch.nn.Module
    functions: Dict[str, Callable[[], object]]
    reference: torch.Tensor
    fast: torch.Tensor


def curvature_problem(num_coords: int = 16, num_points: int = 256, seed: int = 0) -> CurvatureProblem:
    """Build the decoder, masses, state and the four candidate computations (call under no_grad)."""
    torch.manual_seed(seed)
    decoder = TinyAttentionDecoder(num_coords, num_points, seed=seed).eval()
    masses = torch.full((num_points,), 1.0 / num_points)
    q = 0.3 * torch.randn(num_coords)
    qdot = torch.randn(num_coords)
    kmap = KinematicMap(decoder, masses, num_coords, derivatives="fd")
    with torch.no_grad():
        reference = curvature_term_christoffel(decoder, masses, q, qdot)
        fast = curvature_term_ad(decoder, masses, q, qdot)
        jac = torch.func.jacfwd(decoder)(q).reshape(-1, num_coords)
    return CurvatureProblem(decoder, {
        "christoffel": lambda: curvature_term_christoffel(decoder, masses, q, qdot),
        "ad": lambda: curvature_term_ad(decoder, masses, q, qdot),
        "ad_given_j": lambda: curvature_force(jac, masses, second_derivative_ad(decoder, q, qdot)[2]),
        "fd": lambda: expand_fd(kmap, q, qdot)}, reference, fast)


def benchmark_curvature(num_coords: int = 16, num_points: int = 256, repeats: int = 10,
                        seed: int = 0) -> Dict[str, float]:
    """Best-of-`repeats` seconds of both forms at one random state, on one thread.

    ratio = Christoffel / AD.
    ratio counts J in the AD form (jacfwd + jvp of jvp); ratio_given_j counts only the jvp of jvp
    and J^T m d2x, since a right-hand side needs J for M anyway. Also reports the relative
    difference of the two results (float32) and the time of one batched finite-difference
    `expand` (x, J and d2x together) for comparison.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        problem = curvature_problem(num_coords, num_points, seed)
        with torch.no_grad():
            best = _interleaved_best(problem.functions, repeats)
    finally:
        torch.set_num_threads(threads)
    ref, fast = problem.reference, problem.fast
    t_chr, t_ad, t_fd, t_given = best["christoffel"], best["ad"], best["fd"], best["ad_given_j"]
    diff = float(torch.linalg.vector_norm(ref - fast) / torch.linalg.vector_norm(ref))
    return {"num_coords": num_coords, "num_points": num_points, "christoffel_s": t_chr, "ad_s": t_ad,
            "ad_given_j_s": t_given, "fd_expand_s": t_fd, "ratio": t_chr / t_ad,
            "ratio_given_j": t_chr / t_given, "relative_difference": diff}


if __name__ == "__main__":
    result = benchmark_curvature()
    for name, value in result.items():
        print(f"{name}: {value:.4g}" if isinstance(value, float) else f"{name}: {value}")
