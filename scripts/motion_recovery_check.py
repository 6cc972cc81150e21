"""How far the posterior reconstruction moves what moves: per category, on the val split.

For each val pair (posterior mean, dataset heading, no augmentation) the query points that move by
more than 1e-3 (normalised units) are the moving part. Their mean true displacement t and mean
predicted displacement p give the fraction of the travel reproduced, p.t / |t|^2 (1 = all of it,
0 = none), and the cosine between p and t (1 = the right direction). Pairs whose moving part has
fewer than 5 query points are skipped. Reported per category: medians over its pairs.

--fit-latent N asks whether the decoder could do better than the posterior: for the first N such
pairs of each category, z is fitted to the pair's true moved query points (Adam from the posterior
mean, FIT_STEPS steps; with the correspondence, so a test of what the decoder can represent, not
inverse kinematics), and the travel of the fitted z and its distance from the posterior mean are
reported beside the posterior's.

    .venv/bin/python scripts/motion_recovery_check.py --data DATASET_DIR --out docs/model/motion_recovery.json \\
        shipped=neurok_ros/assets/neurok_default.pt [NAME=CHECKPOINT ...] [--fit-latent 4]
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from neurok_ros.evaluation.pose_pairs import category_of
from neurok_ros.model.conditional_vae import apply_deformation
from neurok_ros.training.checkpoint import load_model
from neurok_ros.training.pair_dataset import PairDataset, encoder_deformation
from neurok_ros.training.run_config import RunConfig
from neurok_ros.training.trainer import collate
from val_heading_check import posterior_batches  # scripts/, beside this file

MOVING = 1e-3  # normalised units
MIN_POINTS = 5
FIT_STEPS, FIT_RATE = 150, 0.05


def travel_fraction(predicted: torch.Tensor, true: torch.Tensor) -> tuple[float, float] | None:
    """Displacements (N, 3) of one pair -> (fraction of the moving part's travel reproduced, cosine),
    None when fewer than MIN_POINTS points move."""
    moving = true.norm(dim=-1) > MOVING
    if int(moving.sum()) < MIN_POINTS:
        return None
    t, p = true[moving].mean(0), predicted[moving].mean(0)
    return float(p @ t / (t @ t)), float(torch.nn.functional.cosine_similarity(p, t, dim=0))


def fitted_latent_travel(model, item: dict, output: str) -> tuple[float, float, float]:
    """One pair (collated, batch 1): (posterior travel, fitted-z travel, |z_fit - z_posterior|)."""
    with torch.no_grad():
        outputs = model(item["points"], encoder_deformation(item, output), item["query_points"], sample=False)
        _, shape = model.encode_prior(item["points"])
    points, target = item["query_points"], item["target_positions"]
    start = outputs["posterior_mean"]
    z = start.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([z], lr=FIT_RATE)
    for _ in range(FIT_STEPS):
        moved = apply_deformation(model.decode(z, points, shape), points, output)
        loss = ((moved - target) ** 2).sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        fitted = apply_deformation(model.decode(z, points, shape), points, output)
        posterior = apply_deformation(outputs["prediction"], points, output)
        true = (target - points)[0]
        return (travel_fraction((posterior - points)[0], true)[0], travel_fraction((fitted - points)[0], true)[0],
                float((z - start).norm()))


def recovery(model, pairs: PairDataset, output: str) -> dict[str, dict[str, float]]:
    """Per category: pairs, median fraction of the travel reproduced, median cosine."""
    rows = defaultdict(list)
    for categories, batch, prediction in posterior_batches(model, pairs, output):
        predicted = apply_deformation(prediction, batch["query_points"], output) - batch["query_points"]
        true = batch["target_positions"] - batch["query_points"]
        for j, category in enumerate(categories):
            fraction = travel_fraction(predicted[j], true[j])
            if fraction is not None:
                rows[category].append(fraction)
    return {category: {"pairs": len(values), "travel": float(np.median([v[0] for v in values])),
                       "cosine": float(np.median([v[1] for v in values]))} for category, values in sorted(rows.items())}


def fit_latents(model, pairs: PairDataset, output: str, count: int) -> dict[str, dict[str, float]]:
    """Per category, medians over its first `count` pairs with a moving part: "fit_pairs",
    "fit_posterior_travel", "fit_travel" and "fit_latent_distance" (see fitted_latent_travel)."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    rows = defaultdict(list)
    for i in range(len(pairs)):
        item = pairs[i]
        category = category_of(pairs.files[item["instance"]])
        true = torch.as_tensor(item["target_positions"] - item["query_points"])
        if len(rows[category]) >= count or travel_fraction(true, true) is None:
            continue
        rows[category].append(fitted_latent_travel(model, collate([item]), output))
    return {category: {"fit_pairs": len(values),
                       **{key: float(np.median([v[k] for v in values]))
                          for k, key in enumerate(("fit_posterior_travel", "fit_travel", "fit_latent_distance"))}}
            for category, values in rows.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder")
    parser.add_argument("--out", default="docs/model/motion_recovery.json")
    parser.add_argument("--fit-latent", type=int, default=0, metavar="N",
                        help="per category, fit z to the true motion of N pairs (see above)")
    parser.add_argument("checkpoints", nargs="+", metavar="NAME=CHECKPOINT")
    args = parser.parse_args()
    results = {}
    for item in args.checkpoints:
        name, _, path = item.partition("=")
        model, payload = load_model(path, device="cpu")
        run = RunConfig.from_dict(payload["config"])
        pairs = PairDataset(args.data, "val", run.data, seed=run.training.seed + 1, augment=False)
        results[name] = {"checkpoint": path, "categories": recovery(model, pairs, run.model.output)}
        if args.fit_latent:
            for category, row in fit_latents(model, pairs, run.model.output, args.fit_latent).items():
                results[name]["categories"][category].update(row)
        print(f"{name}: done", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print("fraction of the travel reproduced (median over pairs; cosine in parentheses)")
    print("category".ljust(18) + "".join(name[:16].rjust(17) for name in results))
    for category in results[next(iter(results))]["categories"]:
        cells = [row["categories"].get(category) for row in results.values()]
        print(category.ljust(18) + "".join(f"{c['travel']:9.2f} ({c['cosine']:4.2f})" if c else " " * 17 for c in cells))
    if args.fit_latent:
        print("\ntravel reproduced: posterior mean -> z fitted to the true motion (|z_fit - z_posterior|)")
        for category in results[next(iter(results))]["categories"]:
            cells = [row["categories"].get(category, {}) for row in results.values()]
            print(category.ljust(18) + "".join(
                f"  {c['fit_posterior_travel']:5.2f} -> {c['fit_travel']:4.2f} ({c['fit_latent_distance']:4.1f})"
                if "fit_travel" in c else " " * 26 for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
