"""The scan-fit picture of docs/model.md: the bundled laptop with its lid turned 0.35 rad about the
hinge, seen by one depth camera in front of it and above (3000 area-uniform samples of what the
camera sees), fitted with `neurok fit --partial`.

    .venv/bin/python scripts/scan_fit_example.py OUT_DIR      (writes laptop.ply, view.npy, fitted.ply, fit.png)

fit.png is docs/figures/scan_fit_laptop.png.
"""
import sys
from pathlib import Path

import numpy as np

from neurok_ros.benchmarks.example_meshes import lid_turned
from neurok_ros.cli import main as neurok_main
from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
from neurok_ros.geometry.visibility import visible_samples
from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT

out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/scan_fit")
out.mkdir(parents=True, exist_ok=True)
V, F = load_mesh(DEFAULT_CHECKPOINT.parent / "example_laptop.ply")
save_mesh(out / "laptop.ply", V, F)
camera = V.mean(axis=0) + [0.0, -2.0, 1.0]
np.save(out / "view.npy", visible_samples(lid_turned(V, 0.35, F), F, camera, 3000, np.random.default_rng(6)))
sys.exit(neurok_main(["fit", str(out / "laptop.ply"), str(out / "view.npy"), "--partial", "--out",
                      str(out / "fitted.ply"), "--png", str(out / "fit.png")]))
