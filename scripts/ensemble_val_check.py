"""Choosing how to combine K fits, on the val split (docs/model.md, "An ensemble of fits").

For the pose pairs `neurok eval --split val --pairs-per-category N` draws (seed 0, 2048 TARGET
samples, whole surface), fit a checkpoint K times with fit_ensemble (fit j: encoding and IK seeds j)
and print one JSON line per pair: Chamfer-L1 and IoU (metrics_in_frame, --metric-samples samples) of
each member "s0".."s{K-1}", of their vertex mean "mean" and of the medoid member "medoid"
(docs/model.md's val numbers: --metric-seed 0).

    .venv/bin/python scripts/ensemble_val_check.py --data /tmp/neurok_data \\
        --checkpoint neurok_ros/assets/neurok_default.pt --pairs-per-category 1 --fits 4 --metric-seed 0 > val_neurok.jsonl
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from neurok_ros.data.instance_format import load_instance
from neurok_ros.evaluation.pose_pairs import pair_meshes, pose_pair, select_files, target_samples
from neurok_ros.geometry.metrics import DEFAULT_SEED, metrics_in_frame
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.kinematics.fit_ensemble import fit_ensemble
from neurok_ros.kinematics.instance import load_default_model
from neurok_ros.training.pair_dataset import split_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--split", default="val")
    parser.add_argument("--pairs-per-category", type=int, default=1)
    parser.add_argument("--fits", type=int, default=4)
    parser.add_argument("--metric-samples", type=int, default=50_000)
    parser.add_argument("--metric-seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = Path(args.data)
    model, _ = load_default_model(Path(args.checkpoint))
    for name in select_files(split_files(root, args.split), args.pairs_per_category, 0):
        instance = load_instance(root / name)
        pair = pose_pair(name, instance, 0)
        source, target, faces = pair_meshes(instance, pair)
        ensemble = fit_ensemble(model, source, faces, target_samples(target, faces, 0, name), args.fits)
        transform = NormalisingTransform.from_vertices(source)
        row = {"file": name, "category": instance.category, "kind": instance.kind, "medoid_index": ensemble.medoid}
        shapes = {**{f"s{j}": v for j, v in enumerate(ensemble.member_vertices)}, "mean": ensemble.vertices,
                  "medoid": ensemble.member_vertices[ensemble.medoid]}
        for key, vertices in shapes.items():
            scores = metrics_in_frame((vertices, faces), (target, faces), transform, args.metric_samples,
                                      args.metric_seed)
            row[key] = [scores["chamfer_l1"], scores["iou"]]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
