"""`neurok demo` (what `make demo` runs) end to end, in a subprocess like a user would run it: every
stage on real data, the shipped model through a neurok_node in that process (about 1.5 min on 2 cores)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from neurok_ros.geometry.mesh_io import load_mesh
from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT

pytestmark = [pytest.mark.ros, pytest.mark.model, pytest.mark.slow]

STEPS = ["geometry", "4D data", "latent dynamics", "ROS 2 topics", "outputs", "NeuROK prediction through neurok_node",
         "objects without joints"]
OUTPUTS = ["dataset/manifest.json", "dataset_sheet.png", "dataset_laptop.gif", "hinge_reference.npz",
           "hinge_reference.gif", "trajectory.npz", "trajectory.gif", "energy.png", "soft_poke.gif",
           "cloth_drape.gif", "summary.json"]


def test_demo_runs_every_stage_and_writes_its_outputs(tmp_path):
    out = tmp_path / "demo"
    # the environment (conftest: this run's DDS domain, localhost discovery) goes to the subprocess
    result = subprocess.run([sys.executable, "-m", "neurok_ros", "demo", "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Done in" in result.stdout
    for name in OUTPUTS:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name

    summary = json.loads((out / "summary.json").read_text())
    assert [step["step"] for step in summary["steps"]] == STEPS
    assert summary["lid_fall"]["angle_error_deg"] < 1e-2  # the hinge solve matches the pendulum

    vertices, faces = load_mesh(DEFAULT_CHECKPOINT.parent / "example_laptop.ply")
    trajectory = np.load(out / "trajectory.npz")
    frames = trajectory["frames"]
    assert frames.ndim == 3 and frames.shape[0] > 1 and frames.shape[1:] == vertices.shape
    assert np.array_equal(trajectory["faces"], faces)
    assert np.isfinite(frames).all() and np.isfinite(trajectory["energy"]).all()
    assert summary["prediction"]["frames"] == frames.shape[0]
    # the pushed lid swings shut about the hinge the node read, and rests on its closed limit
    assert summary["prediction"]["max_motion_m"] > 0.1
    assert 0 < summary["prediction"]["at_rest_from_s"] < 1.5 and summary["prediction"]["final_kinetic_j"] < 1e-9
    # the poked beam bends and springs back; the cloth held by an edge falls to hang from it
    poke, cloth = summary["soft_poke"], summary["cloth_drape"]
    assert poke["peak_m"] > 0.02 and poke["final_m"] < 0.3 * poke["peak_m"] and poke["energy_drift"] < 0.01
    assert cloth["joints"] == 0 and cloth["lowest_point_fall_m"] >= 0.3 * cloth["size_m"]
    assert cloth["energy_drift"] < 0.01
