"""How far E_vae's posterior means are from each pair's own optimum, per category, on the val split.

For the first N val pairs of each named category whose moving part has enough query points (as in
motion_recovery_check.py; dataset heading, no augmentation), the pair's training objective
(reconstruction summed over the query points + kl_weight * KL, the run's own weights) is taken at
E_vae's posterior mean and at the mean refined by Adam on that objective alone
(neurok_ros/training/posterior_refinement.py), with the travel each reproduces (1 = all of the
moving part's travel). If the refined mean scores far lower while moving the part further, the
training objective itself asks for the motion and the encoder misses it (an amortisation gap); if
not, the KL weight holds the motion back. Medians per category.

    .venv/bin/python scripts/amortisation_gap_check.py --data DATASET_DIR \\
        --out docs/model/amortisation_gap.json --pairs 8 drawer window door laptop
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from motion_recovery_check import travel_fraction  # scripts/, beside this file
from neurok_ros.evaluation.pose_pairs import category_of
from neurok_ros.model.conditional_vae import apply_deformation
from neurok_ros.model.losses import kl_to_prior
from neurok_ros.training.checkpoint import load_model
from neurok_ros.training.pair_dataset import PairDataset, encoder_deformation
from neurok_ros.training.posterior_refinement import refine_posterior_means
from neurok_ros.training.run_config import RunConfig
from neurok_ros.training.trainer import collate


def category_gap(model, run: RunConfig, items: list[dict], steps: int, rate: float) -> dict:
    """Medians over the pairs `items` (PairDataset items) of one category."""
    batch = collate(items)
    output = model.output
    with torch.no_grad():
        mean, logvar = model.encode_posterior(batch["points"], encoder_deformation(batch, output))
        prior_mean, shape = model.encode_prior(batch["points"])
    refined, before, after = refine_posterior_means(model, mean, logvar, prior_mean, shape, batch, run.loss,
                                                    steps, rate)
    row = {"pairs": len(items)}
    with torch.no_grad():
        points = batch["query_points"]
        true = batch["target_positions"] - points
        for name, z, objective in (("encoder", mean, before), ("refined", refined, after)):
            moved = apply_deformation(model.decode(z, points, shape), points, output) - points
            travel = [travel_fraction(moved[j], true[j])[0] for j in range(len(items))]
            kl = kl_to_prior(z, logvar, prior_mean)
            row[name] = {"objective": float(objective.median()), "kl": float(kl.median()),
                         "travel": float(np.median(travel))}
        row["latent_distance"] = float((refined - mean).flatten(1).norm(dim=1).median())
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder")
    parser.add_argument("--checkpoint", default="neurok_ros/assets/neurok_default.pt")
    parser.add_argument("--out", default="docs/model/amortisation_gap.json")
    parser.add_argument("--pairs", type=int, default=8, help="val pairs per category")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("categories", nargs="+")
    args = parser.parse_args()
    torch.manual_seed(0)
    model, payload = load_model(args.checkpoint, device="cpu")
    model.requires_grad_(False)
    run = RunConfig.from_dict(payload["config"])
    pairs = PairDataset(args.data, "val", run.data, seed=run.training.seed + 1, augment=False)
    chosen = {category: [] for category in args.categories}
    for i in range(len(pairs)):
        item = pairs[i]
        category = category_of(pairs.files[item["instance"]])
        true = torch.as_tensor(item["target_positions"] - item["query_points"])
        if category in chosen and len(chosen[category]) < args.pairs and travel_fraction(true, true) is not None:
            chosen[category].append(item)
    results = {"checkpoint": args.checkpoint, "steps": args.steps, "rate": args.rate,
               "kl_weight": run.loss.kl_weight, "categories": {}}
    print("category: objective E_vae -> refined (KL), travel reproduced E_vae -> refined, |z* - z|")
    for category, items in chosen.items():
        if not items:
            continue
        row = category_gap(model, run, items, args.steps, args.rate)
        results["categories"][category] = row
        e, r = row["encoder"], row["refined"]
        print(f"{category}: {e['objective']:.3f} ({e['kl']:.1f}) -> {r['objective']:.3f} ({r['kl']:.1f}), "
              f"travel {e['travel']:.2f} -> {r['travel']:.2f}, {row['latent_distance']:.1f}", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
