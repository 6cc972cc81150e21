"""`neurok ik` cost on a 10k-vertex mesh (the floor: 20 s on 2 cores): the command run in this
process (mesh loading, model loading, encoding, the fit, decoding and the 100k-sample metrics), on a
target with the lid turned 0.3 rad and on an unmoved one, then once as a fresh process, which adds
Python start-up and the torch import."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from neurok_ros.benchmarks.example_meshes import lid_turned, ten_thousand_vertex_laptop
from neurok_ros.benchmarks.timing import Measurement, measure


def benchmark_inverse_kinematics(repeats: int = 3) -> tuple[list[Measurement], str]:
    from neurok_ros.cli import main as neurok_main
    from neurok_ros.geometry.mesh_io import save_mesh

    folder = Path(tempfile.mkdtemp(prefix="neurok_ik_bench_"))
    source = folder / "laptop10k.ply"
    V, F = ten_thousand_vertex_laptop(source)
    turned = folder / "laptop10k_turned.ply"
    save_mesh(turned, lid_turned(V, 0.3, F), F)
    reports = {}

    def run(key: str, target: Path):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = neurok_main(["ik", str(source), str(target), "--json"])
        if code != 0:
            raise RuntimeError(f"neurok ik exited with {code}: {printed.getvalue()}")
        reports[key] = json.loads(printed.getvalue().strip().splitlines()[-1])

    def fresh_process():
        command = [sys.executable, "-m", "neurok_ros", "ik", str(source), str(turned), "--json"]
        completed = subprocess.run(command, capture_output=True, text=True, check=True)
        reports["process"] = json.loads(completed.stdout.strip().splitlines()[-1])

    name = f"neurok ik, {len(V)} vertices"
    rows = [measure(f"{name}, lid turned 0.3 rad, in process", lambda: run("turned", turned), repeats=repeats),
            measure(f"{name}, unmoved target (SOURCE itself), in process", lambda: run("unmoved", source),
                    repeats=repeats),
            measure(f"{name}, lid turned 0.3 rad, fresh process (`neurok ik ... --json`)", fresh_process,
                    repeats=1, warmup=0)]

    def scores(report: dict) -> str:
        return (f"Chamfer-L1 {report['chamfer_l1']:.4f}, IoU {report['iou']:.3f}, "
                f"its own `seconds` {report['seconds']:.1f}")

    note = (f"The floor is 20 s on 2 cores. The rows time the whole command, its 100k-sample "
            f"metrics included; the `seconds` it reports run from loading the meshes to the decoded fit. "
            f"Last runs: lid turned, {scores(reports['turned'])}; "
            f"unmoved, {scores(reports['unmoved'])}; fresh process, {scores(reports['process'])} "
            f"(k {reports['turned']['k']}, k_q {reports['turned']['k_q']}).")
    return rows, note
