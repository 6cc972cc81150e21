"""neurok_node end to end: start to ready, first mesh (encoding), and action-to-trajectory latency
with a cached encoding, for the example laptop subdivided to at least 10k vertices (30,092) and 61
frames; the process's peak memory."""
from __future__ import annotations

import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_ros.benchmarks.timing import Measurement


def ten_thousand_vertex_laptop(path: Path, at_least: int = 10_000) -> tuple[np.ndarray, np.ndarray]:
    """The bundled example laptop, subdivided until it has at least `at_least` vertices; saved to path."""
    import trimesh

    from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
    from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT

    V, F = load_mesh(DEFAULT_CHECKPOINT.parent / "example_laptop.ply")
    while len(V) < at_least:
        V, F = trimesh.remesh.subdivide(V, F)
    save_mesh(path, V, F)
    return np.asarray(V), np.asarray(F)


def _single(name: str, seconds: float, note: str = "") -> Measurement:
    ms = seconds * 1e3
    return Measurement(name, ms, ms, ms, 1, note)


def benchmark_node(actions: int = 3) -> tuple[list[Measurement], str]:
    from neurok_ros.ros.node_in_process import connected_client

    folder = Path(tempfile.mkdtemp(prefix="neurok_node_bench_"))
    V, _ = ten_thousand_vertex_laptop(folder / "laptop.ply")
    contact = V[np.argmax(V[:, 2])]
    velocity = np.array([0.0, -0.3, 0.0])
    started = time.perf_counter()
    with connected_client(spawn_node=True, timeout=600.0) as client:
        ready = time.perf_counter() - started
        sent = time.perf_counter()
        client.send_mesh_file(folder / "laptop.ply", timeout=600.0)
        first_mesh = time.perf_counter() - sent
        latencies, frames = [], 0
        for _ in range(actions):
            reply = client.request(contact[None], velocity[None], timeout=900.0)
            latencies.append(reply.latency_s * 1e3)
            frames = reply.frames.shape[0]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rows = [_single("node start (model load + warm-up) to ready", ready),
            _single(f"first mesh ({len(V)} vertices) to ready (embedded PLY, encoding)", first_mesh),
            Measurement(f"action to trajectory, {len(V)} vertices x {frames} frames, cached encoding",
                        statistics.median(latencies), min(latencies), max(latencies), actions)]
    note = (f"Default parameters (config/neurok.yaml), one push of 0.3 m/s at the lid's top edge, node and "
            f"client in one process. Peak memory of that process (node, model, client): {peak_mb:.0f} MB.")
    return rows, note
