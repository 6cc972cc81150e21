"""How far the IK falls short of what the model can reach: IK fit vs an oracle fit with correspondence.

For eval's pose pairs (seed 0, 2048 TARGET samples) of the given categories, per checkpoint: the IK
fit (fit_pose with the IKConfig defaults, or --sample-sets N) and the oracle: Adam in z (300 steps at
0.02, from the IK's z and from z_rest) on the mean squared distance between SOURCE's decoded vertices
and TARGET's, i.e. the best pose the model reaches when the correspondence is known. Prints one JSON
line per pair and checkpoint: IoU, Chamfer-L1 (metrics_in_frame, --metric-samples) and the mean
vertex error (normalised units) of both, and the IK objective of both on the IK's own sample set
("objective"; lower = the IK prefers it). docs/model.md, "Fresh samples at every step".

    .venv/bin/python scripts/ik_oracle_gap.py --data /tmp/neurok_data NeuROK=neurok_ros/assets/neurok_default.pt \\
        no_augment=/tmp/fb/no_augment.pt --categories box_lid cabinet door drawer laptop microwave oven refrigerator
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from neurok_ros.data.instance_format import load_instance
from neurok_ros.evaluation.pose_pairs import category_of, pair_meshes, pose_pair, select_files, target_samples
from neurok_ros.geometry.metrics import metrics_in_frame
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.kinematics.instance import EncodingConfig, encode_mesh, load_default_model
from neurok_ros.kinematics.inverse_kinematics import IKConfig, adam_on_rows, chamfer_l2, fit_pose
from neurok_ros.training.pair_dataset import split_files


def oracle_latent(instance, source: np.ndarray, target: np.ndarray, start: torch.Tensor) -> torch.Tensor:
    """(k,) latent whose decoded SOURCE vertices come closest (mean squared distance) to TARGET's."""
    dtype = instance.prior_mean.dtype
    with torch.no_grad():
        queries = instance.query_cache(torch.as_tensor(instance.transform.apply(source), dtype=dtype))
    truth = torch.as_tensor(instance.transform.apply(target), dtype=dtype)

    def vertex_error(z: torch.Tensor) -> torch.Tensor:
        return (instance.positions(z, queries) - truth).square().sum(-1).mean(1)

    z, _ = adam_on_rows(torch.stack([start, instance.rest_latent]), vertex_error, 300, 0.02)
    with torch.no_grad():
        return z[int(torch.argmin(vertex_error(z)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--pairs-per-category", type=int, default=2)
    parser.add_argument("--categories", nargs="+", required=True)
    parser.add_argument("--sample-sets", type=int, help="IKConfig.sample_sets (default: IKConfig's)")
    parser.add_argument("--metric-samples", type=int, default=50_000)
    parser.add_argument("checkpoints", nargs="+", metavar="NAME=CHECKPOINT")
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = Path(args.data)
    config = IKConfig() if args.sample_sets is None else replace(IKConfig(), sample_sets=args.sample_sets)
    names = [name for name in select_files(split_files(root, args.split), args.pairs_per_category, 0)
             if category_of(name) in args.categories]
    for spec in args.checkpoints:
        label, path = spec.split("=", 1)
        model, _ = load_default_model(Path(path))
        for name in names:
            instance_data = load_instance(root / name)
            pair = pose_pair(name, instance_data, 0)
            source, target, faces = pair_meshes(instance_data, pair)
            instance = encode_mesh(model, source, faces, EncodingConfig())
            observed = torch.as_tensor(instance.transform.apply(target_samples(target, faces, 0, name)),
                                       dtype=instance.prior_mean.dtype)
            fit = fit_pose(instance, observed, config)
            oracle = oracle_latent(instance, source, target, fit.z)
            with torch.no_grad():
                own = instance.query_cache(instance.surface_samples(config.points, seed=config.seed)[1])
                objective = chamfer_l2(instance.positions(torch.stack([fit.z, oracle]), own), observed)
            transform = NormalisingTransform.from_vertices(source)
            row = {"checkpoint": label, "file": name, "category": instance_data.category,
                   "pose_a": pair.pose_a, "pose_b": pair.pose_b, "sample_sets": config.sample_sets}
            for key, z, value in (("ik", fit.z, objective[0]), ("oracle", oracle, objective[1])):
                vertices = instance.decode(z=z)
                scores = metrics_in_frame((vertices, faces), (target, faces), transform, args.metric_samples, 0)
                error = np.linalg.norm(transform.apply(vertices) - transform.apply(target), axis=1).mean()
                row[key] = {"iou": scores["iou"], "chamfer_l1": scores["chamfer_l1"],
                            "vertex_error": float(error), "objective": float(value)}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
