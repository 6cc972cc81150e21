"""The velocity term by nested forward AD (and by batched differences) equals the explicit
Christoffel-symbol form, on random small MLP maps and a random small attention decoder."""
import math

import pytest
import torch

from neurok_ros.dynamics.benchmark_curvature import benchmark_curvature
from neurok_ros.dynamics.christoffel import (
    christoffel_force,
    christoffel_symbols,
    curvature_term_christoffel,
    mass_matrix_derivative,
)
from neurok_ros.dynamics.curvature import curvature_force, curvature_term_ad
from neurok_ros.dynamics.kinematic_map import KinematicMap, expand_ad, expand_fd, jacobian_ad, jacobian_fd
from neurok_ros.dynamics.mass_matrix import mass_matrix

DT = torch.float64

# torch's forward-AD decompositions call torch.jit.script once per process.
pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def _mlp_map(k: int, n: int, seed: int):
    """x(q) = base + 0.2 MLP(q) reshaped to (n, 3): two tanh layers, random weights."""
    gen = torch.Generator().manual_seed(seed)
    base = torch.rand(n, 3, generator=gen, dtype=DT)
    w1, b1 = torch.randn(32, k, generator=gen, dtype=DT), torch.randn(32, generator=gen, dtype=DT)
    w2, b2 = torch.randn(32, 32, generator=gen, dtype=DT) / 6, torch.randn(32, generator=gen, dtype=DT)
    w3 = torch.randn(3 * n, 32, generator=gen, dtype=DT) / 6

    def positions(q):
        h = torch.tanh(torch.tanh(q @ w1.T + b1) @ w2.T + b2)
        return base + 0.2 * (h @ w3.T).reshape(q.shape[:-1] + (n, 3))

    return positions


def _attention_map(k: int, n: int, seed: int, tokens: int = 4, token_dim: int = 4, width: int = 16):
    """A random decoder: z = mu + A q as tokens, token self-attention, query cross-attention,
    Fourier-feature queries, MLP head; attention as explicit matmul + softmax."""
    gen = torch.Generator().manual_seed(seed)

    def rnd(*shape, scale=1.0):
        return torch.randn(*shape, generator=gen, dtype=DT) * scale

    latent = tokens * token_dim
    basis, _ = torch.linalg.qr(rnd(latent, k))
    mu = rnd(latent)
    points = torch.rand(n, 3, generator=gen, dtype=DT) - 0.5
    freqs = rnd(3, width // 2, scale=3.0)
    w_tok = rnd(token_dim, width, scale=0.5)
    wq_s, wk_s, wv_s = (rnd(width, width, scale=width ** -0.5) for _ in range(3))
    wq, wk, wv = (rnd(width, width, scale=width ** -0.5) for _ in range(3))
    w_h1, w_h2 = rnd(2 * width, width, scale=(2 * width) ** -0.5), rnd(width, 3, scale=0.1)

    def attend(queries, keys, values):
        scores = queries @ keys.transpose(-1, -2) / math.sqrt(width)
        return torch.softmax(scores, dim=-1) @ values

    def positions(q):
        z = (mu + q @ basis.T).reshape(q.shape[:-1] + (tokens, token_dim)) @ w_tok
        z = z + attend(z @ wq_s, z @ wk_s, z @ wv_s)
        angles = points @ freqs
        h = torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)
        a = attend(h @ wq, z @ wk, z @ wv)
        h = torch.cat([h.expand(a.shape), a], dim=-1)
        return points + torch.nn.functional.gelu(h @ w_h1) @ w_h2

    return positions


MAPS = [("mlp", 4, 0), ("mlp", 6, 1), ("mlp", 8, 2), ("attention", 5, 3), ("attention", 8, 4)]


def _build(kind, k, seed, n=24):
    positions = (_mlp_map if kind == "mlp" else _attention_map)(k, n, seed)
    masses = 0.5 + torch.rand(n, generator=torch.Generator().manual_seed(seed + 100), dtype=DT)
    gen = torch.Generator().manual_seed(seed + 200)
    q, qdot = 0.5 * torch.randn(k, generator=gen, dtype=DT), torch.randn(k, generator=gen, dtype=DT)
    return positions, masses, q, qdot


@pytest.mark.parametrize("kind,k,seed", MAPS)
def test_christoffel_form_equals_nested_jvp(kind, k, seed):
    positions, masses, q, qdot = _build(kind, k, seed)
    reference = curvature_term_christoffel(positions, masses, q, qdot)
    ad = curvature_term_ad(positions, masses, q, qdot)
    assert float(torch.linalg.vector_norm(reference)) > 1e-3, "the map should be curved"
    assert _relative(ad, reference) <= 1e-5


@pytest.mark.parametrize("kind,k,seed", MAPS)
def test_kinematic_map_expansions_agree(kind, k, seed):
    """expand (the right-hand side's kernel) by AD and by 2 k_q + 3 batched differences."""
    positions, masses, q, qdot = _build(kind, k, seed)
    kmap = KinematicMap(positions, masses, k, derivatives="ad")
    x_ad, j_ad, xdd_ad = expand_ad(kmap, q, qdot)
    x_fd, j_fd, xdd_fd = expand_fd(kmap, q, qdot)
    reference = curvature_term_christoffel(positions, masses, q, qdot)
    assert _relative(curvature_force(j_ad, masses, xdd_ad), reference) <= 1e-5
    assert _relative(curvature_force(j_fd, masses, xdd_fd), reference) <= 1e-5
    assert _relative(x_fd, x_ad) <= 1e-12
    assert _relative(mass_matrix(j_fd, masses), mass_matrix(j_ad, masses)) <= 1e-8
    assert _relative(jacobian_fd(kmap, q)[1], jacobian_ad(kmap, q)[1]) <= 1e-8


def test_christoffel_structure():
    """Gamma is symmetric in its last two indices, and qdot . c = 1/2 qdot^T (dM/dt) qdot."""
    positions, masses, q, qdot = _build("attention", 6, 5)
    dm = mass_matrix_derivative(positions, masses, q)
    gamma = christoffel_symbols(dm)
    assert torch.allclose(gamma, gamma.transpose(1, 2), rtol=1e-12, atol=1e-14)
    c = christoffel_force(gamma, qdot)
    m_dot = torch.einsum("ijl,l->ij", dm, qdot)
    assert float(qdot @ c) == pytest.approx(0.5 * float(qdot @ m_dot @ qdot), rel=1e-10)


def test_benchmark_runs_and_agrees():
    result = benchmark_curvature(num_coords=4, num_points=32, repeats=1)
    assert result["relative_difference"] < 1e-4
    assert result["ratio"] > 0 and math.isfinite(result["ratio"])
