"""`neurok simulate` cost on a 10k-vertex mesh, 2 s at 30 fps, a push on the lid: the whole command as
a fresh process (Python, torch, the model, encoding, the readout, the joints chart, traj.npz); the
readout (once per mesh) and the joints chart, the default for an object with joints; then the
learned latent chart (`--articulation none`, a free soft body, here without gravity): encode +
simulate + decode with the solver on the polynomial surrogate (the default) and on the decoder
itself (at rtol 1e-4: the decoder map takes 4x as long at the default 1e-5); and how far apart
those two motions end up."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from neurok_ros.benchmarks.example_meshes import ten_thousand_vertex_laptop
from neurok_ros.benchmarks.timing import Measurement, measure


def benchmark_simulation(repeats: int = 3) -> tuple[list[Measurement], str]:
    from neurok_ros.articulation.readout import read_articulation
    from neurok_ros.dynamics.contact_conditions import ContactConditions
    from neurok_ros.kinematics.instance import encode_mesh, load_default_model
    from neurok_ros.simulation.predict import predict_motion
    from neurok_ros.simulation.settings import settings_from

    folder = Path(tempfile.mkdtemp(prefix="neurok_sim_bench_"))
    V, F = ten_thousand_vertex_laptop(folder / "laptop.ply")
    top = V[np.argmax(V[:, 2])]
    command = [sys.executable, "-m", "neurok_ros", "simulate", str(folder / "laptop.ply"), "--contact",
               *map(str, top), "--velocity", "0", "-0.3", "0", "--duration", "2", "--fps", "30",
               "--out", str(folder / "traj.npz")]
    fresh = measure(f"neurok simulate, {len(V)} vertices, 2 s at 30 fps, push, fresh process (encoding, readout, "
                    f"joints chart, traj.npz)", lambda: subprocess.run(command, check=True, capture_output=True),
                    repeats=repeats, warmup=0)
    model, _ = load_default_model()
    conditions = ContactConditions(top[None], [[0.0, -0.3, 0.0]])
    results = {}

    def run(key: str, **settings):  # no gravity: the free body would fall 20 m and swamp the comparison
        instance = encode_mesh(model, V, F)
        results[key] = predict_motion(instance, conditions, settings_from(gravity=(0.0, 0.0, 0.0), **settings))

    encoded = encode_mesh(model, V, F)
    readouts = []
    readout_row = measure(f"readout (neurok articulate on the encoded mesh, once per mesh), {len(V)} vertices",
                          lambda: readouts.append(read_articulation(encoded)), repeats=1, warmup=0)

    def joints():
        results["joints"] = predict_motion(encoded, conditions, settings_from(), articulation=readouts[-1])

    name = f"encode + simulate + decode, {len(V)} vertices, 2 s at 30 fps, push"
    rows = [fresh, readout_row,
            measure(f"simulate + output, {len(V)} vertices, 2 s at 30 fps, push, joints chart (default for an "
                    f"object with joints)", joints, repeats=repeats),
            measure(f"{name}, latent chart (--articulation none, no gravity), polynomial map", lambda: run("latent"),
                    repeats=repeats),
            measure(f"{name}, latent chart, polynomial map, rtol 1e-4",
                    lambda: run("polynomial", dynamics_map="polynomial", rtol=1e-4), repeats=repeats),
            measure(f"{name}, latent chart, decoder map, rtol 1e-4",
                    lambda: run("decoder", dynamics_map="decoder", rtol=1e-4), repeats=1, warmup=0)]
    fast, exact = results["polynomial"], results["decoder"]
    samples = fast.summary["simulation_points"]
    gap = np.linalg.norm(fast.points[:, :samples] - exact.points[:, :samples], axis=-1)
    moved = np.linalg.norm(exact.points[:, :samples] - exact.points[:1, :samples], axis=-1)
    rms_gap = np.sqrt((gap ** 2).mean(axis=1))
    half = len(rms_gap) // 2
    parts = {k: round(v, 2) for k, v in fast.summary["seconds"].items()}
    joint_run = results["joints"].summary
    note = (f"Joints chart: {len(joint_run['joints'])} joint(s) read, stages {joint_run['seconds']} s, "
            f"{joint_run['steps']} RK4 steps, energy drift {joint_run['energy_drift']:.1e}. "
            f"Stages of the last latent-chart polynomial run (s): {parts}; right-hand sides: "
            f"{fast.summary['rhs_evaluations']} (polynomial, final solve) and {exact.summary['rhs_evaluations']} "
            f"(decoder). Surrogate error along its own trajectory: RMS "
            f"{fast.summary['surrogate']['frame_error']['rms_m'] * 1e3:.2f} mm, max "
            f"{fast.summary['surrogate']['frame_error']['max_m'] * 1e3:.2f} mm. Polynomial vs decoder motion "
            f"of the simulation points (RMS over points): {rms_gap[:half].max() * 1e3:.1f} mm at most over the "
            f"first second, {rms_gap.max() * 1e3:.1f} mm over 2 s, for displacements up to "
            f"{moved.max() * 1e3:.0f} mm (RMS {np.sqrt((moved ** 2).mean()) * 1e3:.1f} mm). Latent chart: "
            f"energy drift {results['latent'].summary['energy_drift'] * 100:.2f}%, contact residual "
            f"{results['latent'].summary['contact_velocity_residual']:.1e} of the requested speed, "
            f"{results['latent'].summary['rhs_evaluations']} right-hand sides (docs/physics.md).")
    return rows, note
