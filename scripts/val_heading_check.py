"""Reconstruction error of checkpoints at the dataset's heading and at a random one, on the val split.

The val point error of `neurok train` (posterior mean, the first training.val_pairs fixed val pairs,
no augmentation), and the same pairs each turned about the up axis by a seeded random angle (no tilt,
no scale): how much of a model's fit depends on meeting objects at the heading of its training data.
A turned object's bounding box is larger, so its normalised errors are smaller: compare models at
the same heading, not one heading with the other.

    .venv/bin/python scripts/val_heading_check.py --data DATASET_DIR --out docs/model/val_heading_check.json \\
        NeuROK=neurok_ros/assets/neurok_default.pt [NAME=CHECKPOINT ...]
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from neurok_ros.training.checkpoint import load_model
from neurok_ros.training.distributed import setup_distributed
from neurok_ros.training.pair_dataset import PairDataset
from neurok_ros.training.run_config import RunConfig
from neurok_ros.training.trainer import validate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder")
    parser.add_argument("--out", default="docs/model/val_heading_check.json")
    parser.add_argument("checkpoints", nargs="+", metavar="NAME=CHECKPOINT")
    args = parser.parse_args()
    context = setup_distributed("cpu")  # one process
    results = {}
    for item in args.checkpoints:
        name, _, path = item.partition("=")
        model, payload = load_model(path, device="cpu")
        run = RunConfig.from_dict(payload["config"])
        turn_only = replace(run.data, rotation="upright", max_tilt_degrees=0.0, scale_range=(1.0, 1.0))
        row = {"checkpoint": path, "val_pairs": run.training.val_pairs}
        for heading in ("dataset", "random"):
            pairs = PairDataset(args.data, "val", turn_only, seed=run.training.seed + 1, augment=heading == "random")
            metrics = validate(model, pairs, run, context)
            row[heading] = {key: metrics[f"val_{key}"] for key in ("point_error", "position")}
        results[name] = row
        print(f"{name}: val point error {row['dataset']['point_error']:.4f} at the dataset's heading, "
              f"{row['random']['point_error']:.4f} at a random heading", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
