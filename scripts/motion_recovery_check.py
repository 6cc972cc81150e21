"""How far the posterior reconstruction moves what moves: per category, on the val split.

For each val pair (posterior mean, dataset heading, no augmentation) the query points that move by
more than 1e-3 (normalised units) are the moving part. Their mean true displacement t and mean
predicted displacement p give the fraction of the travel reproduced, p.t / |t|^2 (1 = all of it,
0 = none), and the cosine between p and t (1 = the right direction). Pairs whose moving part has
fewer than 5 query points are skipped. Reported per category: medians over its pairs.

    .venv/bin/python scripts/motion_recovery_check.py --data DATASET_DIR --out docs/model/motion_recovery.json \\
        shipped=neurok_ros/assets/neurok_default.pt [NAME=CHECKPOINT ...]
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from neurok_ros.model.conditional_vae import apply_deformation
from neurok_ros.training.checkpoint import load_model
from neurok_ros.training.pair_dataset import PairDataset, encoder_deformation
from neurok_ros.training.run_config import RunConfig
from neurok_ros.training.trainer import collate

MOVING = 1e-3  # normalised units
MIN_POINTS = 5


@torch.no_grad()
def recovery(model, pairs: PairDataset, output: str, batch_size: int = 64) -> dict[str, dict[str, float]]:
    """Per category: pairs, median fraction of the travel reproduced, median cosine."""
    rows = defaultdict(list)
    for start in range(0, len(pairs), batch_size):
        batch = collate([pairs[i] for i in range(start, min(len(pairs), start + batch_size))])
        outputs = model(batch["points"], encoder_deformation(batch, output), batch["query_points"], sample=False)
        predicted = apply_deformation(outputs["prediction"].float(), batch["query_points"], output) - batch["query_points"]
        true = batch["target_positions"] - batch["query_points"]
        for j, instance in enumerate(batch["instance"].tolist()):
            moving = true[j].norm(dim=-1) > MOVING
            if int(moving.sum()) < MIN_POINTS:
                continue
            t, p = true[j][moving].mean(0), predicted[j][moving].mean(0)
            rows[pairs.files[instance].rsplit("_", 1)[0]].append(
                (float(p @ t / (t @ t)), float(torch.nn.functional.cosine_similarity(p, t, dim=0))))
    return {category: {"pairs": len(values), "travel": float(np.median([v[0] for v in values])),
                       "cosine": float(np.median([v[1] for v in values]))} for category, values in sorted(rows.items())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder")
    parser.add_argument("--out", default="docs/model/motion_recovery.json")
    parser.add_argument("checkpoints", nargs="+", metavar="NAME=CHECKPOINT")
    args = parser.parse_args()
    results = {}
    for item in args.checkpoints:
        name, _, path = item.partition("=")
        model, payload = load_model(path, device="cpu")
        run = RunConfig.from_dict(payload["config"])
        pairs = PairDataset(args.data, "val", run.data, seed=run.training.seed + 1, augment=False)
        results[name] = {"checkpoint": path, "categories": recovery(model, pairs, run.model.output)}
        print(f"{name}: done", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print("fraction of the travel reproduced (median over pairs; cosine in parentheses)")
    print("category".ljust(18) + "".join(name[:16].rjust(17) for name in results))
    for category in results[next(iter(results))]["categories"]:
        cells = [row["categories"].get(category) for row in results.values()]
        print(category.ljust(18) + "".join(f"{c['travel']:9.2f} ({c['cosine']:4.2f})" if c else " " * 17 for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
