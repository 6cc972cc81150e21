"""`neurok articulate` cost on a 10k-vertex mesh (floor: 10 s on 2 cores): the command in this
process (mesh and model loading, encoding, the readout, the URDF), then once as a fresh process,
which adds Python start-up and the torch import."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from neurok_ros.benchmarks.example_meshes import ten_thousand_vertex_laptop
from neurok_ros.benchmarks.timing import Measurement, measure


def benchmark_articulation(repeats: int = 3) -> tuple[list[Measurement], str]:
    from neurok_ros.cli import main as neurok_main

    folder = Path(tempfile.mkdtemp(prefix="neurok_articulate_bench_"))
    mesh = folder / "laptop10k.ply"
    V, _ = ten_thousand_vertex_laptop(mesh)
    command = ["articulate", str(mesh), "--json", "--urdf", str(folder / "laptop10k.urdf")]
    reports = {}

    def in_process():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = neurok_main(command)
        if code != 0:
            raise RuntimeError(f"neurok articulate exited with {code}: {printed.getvalue()}")
        reports["in_process"] = json.loads(printed.getvalue().strip().splitlines()[-1])

    def fresh_process():
        completed = subprocess.run([sys.executable, "-m", "neurok_ros", *command], capture_output=True, text=True,
                                   check=True)
        reports["process"] = json.loads(completed.stdout.strip().splitlines()[-1])

    name = f"neurok articulate --json --urdf, {len(V)} vertices"
    rows = [measure(f"{name}, in process", in_process, repeats=repeats),
            measure(f"{name}, fresh process", fresh_process, repeats=1, warmup=0)]
    report = reports["in_process"]
    note = (f"The floor is 10 s on 2 cores. The rows time the whole command; its own `seconds` (encoding "
            f"and readout) was {report['seconds']:.1f} s in the last in-process run, which found "
            f"{len(report['parts'])} parts and {len(report['joints'])} joints.")
    return rows, note
