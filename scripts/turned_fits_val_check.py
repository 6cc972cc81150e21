"""Turned fits against fits from seeds alone, on the val split (docs/model.md, "Turned fits").

For eval's pose pairs (seed 0, 2048 TARGET samples, whole surface), fit a checkpoint K times. Fit j
uses encoding and IK seeds j and, unless --no-turn, sees SOURCE and the TARGET samples turned by
90 j degrees about z (up) through SOURCE's bounding-box centre; its decoded vertices are turned back.
Prints one JSON line per pair: Chamfer-L1 and IoU (metrics_in_frame, 50k samples, seed 0) of each
fit "h0".."h{K-1}", of their vertex mean "mean" and of "best", the fit with the least symmetric
Chamfer-L2 to the TARGET samples ("objective": per fit, 8192 samples of its surface, SOURCE-normalised
units squared). Fit 0 is the single fit of `neurok eval`.

    .venv/bin/python scripts/turned_fits_val_check.py --data /tmp/neurok_data \\
        --checkpoint neurok_ros/assets/neurok_default.pt > turned_neurok.jsonl
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from scipy.spatial import cKDTree

from neurok_ros.data.instance_format import load_instance
from neurok_ros.evaluation.pose_pairs import pair_meshes, pose_pair, select_files, target_samples
from neurok_ros.geometry.metrics import metrics_in_frame
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.kinematics.fit_ensemble import fit_ensemble
from neurok_ros.kinematics.instance import EncodingConfig, load_default_model
from neurok_ros.kinematics.inverse_kinematics import IKConfig
from neurok_ros.training.pair_dataset import split_files


def quarter_turns(j: int) -> np.ndarray:
    """(3, 3) rotation by 90 j degrees about z."""
    c, s = np.cos(0.5 * np.pi * j), np.sin(0.5 * np.pi * j)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--fits", type=int, default=4)
    parser.add_argument("--no-turn", action="store_true", help="fits differ by their seeds only")
    parser.add_argument("--split", default="val")
    parser.add_argument("--pairs-per-category", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = Path(args.data)
    model, _ = load_default_model(Path(args.checkpoint))
    for name in select_files(split_files(root, args.split), args.pairs_per_category, 0):
        instance = load_instance(root / name)
        pair = pose_pair(name, instance, 0)
        source, target, faces = pair_meshes(instance, pair)
        observed = target_samples(target, faces, 0, name)
        centre = 0.5 * (source.min(0) + source.max(0))
        transform = NormalisingTransform.from_vertices(source)
        tree = cKDTree(observed)
        fits, objective = [], []
        for j in range(args.fits):
            R = np.eye(3) if args.no_turn else quarter_turns(j)
            fit = fit_ensemble(model, (source - centre) @ R.T + centre, faces, (observed - centre) @ R.T + centre,
                               1, EncodingConfig(seed=j), IKConfig(seed=j))
            vertices = (fit.vertices - centre) @ R + centre
            fits.append(vertices)
            samples = sample_surface(vertices, faces, 8192, np.random.default_rng(0)).points
            to_fit, to_observed = tree.query(samples)[0], cKDTree(samples).query(observed)[0]
            objective.append(float((to_fit ** 2).mean() + (to_observed ** 2).mean()) * transform.scale ** 2)
        best = int(np.argmin(objective))
        shapes = {**{f"h{j}": v for j, v in enumerate(fits)}, "mean": np.stack(fits).mean(0), "best": fits[best]}
        row = {"file": name, "category": instance.category, "objective": objective, "best_index": best}
        for key, vertices in shapes.items():
            scores = metrics_in_frame((vertices, faces), (target, faces), transform, 50_000, 0)
            row[key] = [scores["chamfer_l1"], scores["iou"]]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
