"""Reconstruction error of checkpoints at the dataset's heading and at a random one, on the val split.

The val point error of `neurok train` (posterior mean, its training.val_pairs fixed val pairs spread
over the split, no augmentation), and the same pairs each turned about the up axis by a seeded random angle (no tilt,
no scale): how much of a model's fit depends on meeting objects at the heading of its training data.
A turned object's bounding box is larger, so its normalised errors are smaller: compare models at
the same heading, not one heading with the other.

--per-category adds, for each heading, the mean point error per category over every val pair (all
val instances x data.pairs_per_instance pairs, not only val_pairs of them): where a model's
deficit lies.

    .venv/bin/python scripts/val_heading_check.py --data DATASET_DIR --out docs/model/val_heading_check.json \\
        NeuROK=neurok_ros/assets/neurok_default.pt [NAME=CHECKPOINT ...] [--per-category]
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import torch

from neurok_ros.evaluation.pose_pairs import category_of
from neurok_ros.model.losses import reconstruction_terms
from neurok_ros.training.checkpoint import load_model
from neurok_ros.training.distributed import setup_distributed
from neurok_ros.training.pair_dataset import PairDataset, encoder_deformation
from neurok_ros.training.run_config import RunConfig
from neurok_ros.training.trainer import collate, validate


@torch.no_grad()
def posterior_batches(model, pairs: PairDataset, output: str, batch_size: int = 64):
    """Every pair of `pairs` in batches: yields (categories, collated batch, prediction (B, Q, 8 | 3)
    decoded from the posterior mean)."""
    for start in range(0, len(pairs), batch_size):
        batch = collate([pairs[i] for i in range(start, min(len(pairs), start + batch_size))])
        outputs = model(batch["points"], encoder_deformation(batch, output), batch["query_points"], sample=False)
        yield [category_of(pairs.files[i]) for i in batch["instance"].tolist()], batch, outputs["prediction"].float()


def per_category(model, pairs: PairDataset, output: str) -> dict[str, float]:
    """Mean point error (posterior mean, normalised units) of every pair of `pairs`, per category."""
    errors = defaultdict(list)
    for categories, batch, prediction in posterior_batches(model, pairs, output):
        terms = reconstruction_terms(prediction, batch["query_points"], batch["target_positions"],
                                     batch.get("target_dual_quaternions"), output)
        for category, error in zip(categories, terms["point_error"].tolist()):
            errors[category].append(error)
    means = {category: sum(values) / len(values) for category, values in sorted(errors.items())}
    means["all"] = sum(sum(values) for values in errors.values()) / sum(len(values) for values in errors.values())
    return means


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder")
    parser.add_argument("--out", default="docs/model/val_heading_check.json")
    parser.add_argument("--per-category", action="store_true", help="also every val pair, per category")
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
            if args.per_category:
                row[heading]["per_category"] = per_category(model, pairs, run.model.output)
        results[name] = row
        print(f"{name}: val point error {row['dataset']['point_error']:.4f} at the dataset's heading, "
              f"{row['random']['point_error']:.4f} at a random heading", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    if args.per_category:
        for heading in ("dataset", "random"):
            print(f"\nmean point error per category, every val pair, {heading} heading")
            print("category".ljust(18) + "".join(name[:12].rjust(13) for name in results))
            for category in results[next(iter(results))][heading]["per_category"]:
                print(category.ljust(18) + "".join(f"{row[heading]['per_category'][category]:13.4f}"
                                                   for row in results.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
