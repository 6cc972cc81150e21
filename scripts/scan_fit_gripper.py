"""The gripper measurement of docs/model.md ("A gripper in the view"): the view of
scripts/scan_fit_example.py (the bundled laptop, lid turned 0.35 rad, one depth camera) plus points on
a gripper at the lid's top edge (two 2 x 2 x 6 cm fingers and a palm), fitted with `fit_scan`
(partial) at each trim; prints one JSON line per fit with the fitted surface's distance to the true
one (median, 90th percentile, mm).

    .venv/bin/python scripts/scan_fit_gripper.py [CLUTTER,...] [TRIM,...]     (default 0,0.1,0.25 0,0.1,0.25)
"""
import json
import sys

import numpy as np

from neurok_ros.benchmarks.example_meshes import lid_turned
from neurok_ros.geometry.mesh_io import load_mesh
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.geometry.visibility import visible_samples
from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT, encode_mesh, load_default_model
from neurok_ros.kinematics.scan_fit import fit_scan, surface_distances


def box_points(low, high, count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, 3) area-uniform points on the surface of the axis-aligned box [low, high], metres."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    size = high - low
    areas = np.repeat([size[1] * size[2], size[0] * size[2], size[0] * size[1]], 2)
    side = rng.choice(6, count, p=areas / areas.sum())
    points = low + rng.random((count, 3)) * size
    axis = side // 2
    points[np.arange(count), axis] = np.where(side % 2 == 0, low[axis], high[axis])
    return points


def gripper_points(shape: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, 3) points of two fingers on the camera's side of the lid's top edge and a palm above it."""
    top = shape[:, 2].max()
    front = shape[shape[:, 2] > top - 0.01, 1].min()
    per_finger = count // 3
    fingers = [box_points([x - 0.01, front - 0.025, top - 0.05], [x + 0.01, front - 0.005, top + 0.01], per_finger, rng)
               for x in (-0.03, 0.03)]
    palm = box_points([-0.05, front - 0.04, top + 0.01], [0.05, front + 0.01, top + 0.04], count - 2 * per_finger, rng)
    return np.concatenate(fingers + [palm])


def main(clutters: list[float], trims: list[float]) -> None:
    V, F = load_mesh(DEFAULT_CHECKPOINT.parent / "example_laptop.ply")
    truth = lid_turned(V, 0.35, F)
    view = visible_samples(truth, F, V.mean(axis=0) + [0.0, -2.0, 1.0], 3000, np.random.default_rng(6))
    instance = encode_mesh(load_default_model()[0], V, F)
    for clutter in clutters:
        count = int(round(clutter * len(view) / (1.0 - clutter)))
        scan = np.concatenate([view, gripper_points(truth, count, np.random.default_rng(3))])
        for trim in trims:
            fit = fit_scan(instance, V, F, scan, partial=True, trim=trim)
            fitted = sample_surface(fit.vertices, F, 20000, np.random.default_rng(2)).points
            error = surface_distances(fitted, truth, F)
            print(json.dumps({"gripper_fraction": clutter, "gripper_points": count, "trim": trim, "moved": fit.moved,
                              "fit_to_truth_mm": [round(1000 * e, 1) for e in error],
                              "object_residual_mm": [round(1000 * e, 1) for e in surface_distances(view, fit.vertices, F)],
                              "seconds": round(fit.seconds, 1)}), flush=True)


if __name__ == "__main__":
    main([float(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "0,0.1,0.25").split(",")],
         [float(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "0,0.1,0.25").split(",")])
