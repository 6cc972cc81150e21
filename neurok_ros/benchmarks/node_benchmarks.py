"""neurok_node end to end: start to ready, first mesh (encoding and readout), the object's URDF on
~/object_description after the readout, and action-to-trajectory latency
with a cached encoding, for the example laptop remeshed to about 10k vertices (subdivided, then
quadric-decimated) and 61 frames; the process's peak memory."""
from __future__ import annotations

import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_ros.benchmarks.example_meshes import ten_thousand_vertex_laptop
from neurok_ros.benchmarks.timing import Measurement


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
        state = client.send_mesh_file(folder / "laptop.ply", timeout=600.0)
        first_mesh = time.perf_counter() - sent
        description = float(state.get("description_s", "nan"))
        latencies, frames = [], 0
        for _ in range(actions):
            reply = client.request(contact[None], velocity[None], timeout=900.0)
            latencies.append(reply.latency_s * 1e3)
            frames = reply.frames.shape[0]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rows = [_single("node start (model load + warm-up) to ready", ready),
            _single(f"first mesh ({len(V)} vertices) to ready (embedded PLY, encoding and readout)", first_mesh),
            _single("~/object_description after the readout (URDF and link meshes written, published)", description),
            Measurement(f"action to trajectory, {len(V)} vertices x {frames} frames, cached encoding",
                        statistics.median(latencies), min(latencies), max(latencies), actions)]
    note = (f"Default parameters (config/neurok.yaml), one push of 0.3 m/s at the lid's top edge, node and "
            f"client in one process. Peak memory of that process (node, model, client): {peak_mb:.0f} MB.")
    return rows, note
