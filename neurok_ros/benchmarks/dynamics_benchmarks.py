"""Latent dynamics: the curvature term d2x/dq2[qdot, qdot] by forward AD vs explicit Christoffel symbols.

Same set-up as neurok_ros/dynamics/benchmark_curvature.py (a small random attention decoder written
with explicit matmul + softmax, k_q = 16, 256 points, one random state), but timed as medians of
interleaved runs for the report. Issue 5 asks the AD form to be at least 5x faster at k_q = 16.
"""
from __future__ import annotations

from neurok_ros.benchmarks.timing import Measurement, measure_interleaved

REQUIRED_SPEEDUP = 5.0


def benchmark_dynamics(num_coords: int = 16, num_points: int = 256, repeats: int = 21,
                       seed: int = 0) -> tuple[list[Measurement], str]:
    """Rows (Christoffel, AD, AD given J, batched differences) and a note with the ratios."""
    import torch

    from neurok_ros.dynamics.benchmark_curvature import curvature_problem

    names = {
        "christoffel": f"Christoffel form: dM/dq ({num_coords}^3) by nested jacfwd, then Gamma qdot qdot",
        "ad": "AD form: J by jacfwd + d2x[qdot, qdot] by jvp of jvp, then J^T m d2x",
        "ad_given_j": "AD form given J (as in a right-hand side, which needs J for M anyway)",
        "fd": f"for comparison: batched central differences, x + J + d2x in one forward of "
              f"{2 * num_coords + 3} latents",
    }
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        problem = curvature_problem(num_coords, num_points, seed)
        with torch.no_grad():
            rows = measure_interleaved({names[key]: fn for key, fn in problem.functions.items()}, repeats=repeats)
    finally:
        torch.set_num_threads(threads)
    decoder, reference, fast = problem.decoder, problem.reference, problem.fast
    parameters = sum(p.numel() for p in decoder.parameters())
    chris, ad, given = rows[0], rows[1], rows[2]
    difference = float(torch.linalg.vector_norm(reference - fast) / torch.linalg.vector_norm(reference))
    ratio = chris.median_ms / ad.median_ms
    verdict = "met" if ratio >= REQUIRED_SPEEDUP else "NOT met"
    note = (
        f"Curvature term J^T diag(m) d2x/dq2[qdot, qdot] from scratch at one random state, k_q = {num_coords}, "
        f"on a random attention decoder ({num_points} query points cross-attending to {decoder.tokens} latent "
        f"tokens of {decoder.token_dim}, width {decoder.width}, {parameters / 1e3:.0f}k parameters, float32), "
        "one torch thread, the four taking turns.\n\n"
        f"**Speed-up of AD over the Christoffel form: {ratio:.1f}x** (ratio of medians; "
        f"{chris.min_ms / ad.min_ms:.1f}x on the fastest runs; {chris.median_ms / given.median_ms:.1f}x when "
        f"J is already at hand). Issue 5 asks for at least {REQUIRED_SPEEDUP:.0f}x: {verdict}. "
        f"The two forms agree to {difference:.1e} relative.")
    return rows, note
