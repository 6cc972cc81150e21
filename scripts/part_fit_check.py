"""Per part, what NeuROK's test fit does to an articulated object: travel, rigidity, stretch.

For each named instance of the dataset, the evaluation's pose pair (seed 0, dataset heading) is fitted
exactly as `neurok eval`'s NeuROK row fits it (encode SOURCE, fit_pose on 2048 TARGET samples, no
correspondence). Then, with the correspondence the fit never saw, per part of the generator's labels
(lengths in units of SOURCE's longest bounding-box side):
- true and predicted travel: mean displacement of the part's vertices from SOURCE;
- error: mean distance of the predicted vertices from TARGET's;
- non-rigid: mean residual of the best rigid motion of the part from SOURCE to the prediction
  (0 = the part moved as a rigid body).
Per pair: the 1st / 50th / 99th percentile of the ratio of each mesh edge's length after the fit to
before, and metrics_in_frame (as eval.md) of the fit and of identity (SOURCE itself).

    .venv/bin/python scripts/part_fit_check.py --data DATASET_DIR --out docs/model/part_fit_check.json \\
        drawer_0128.npz window_0197.npz [--checkpoint CKPT]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from neurok_ros.data.instance_format import load_instance
from neurok_ros.evaluation.methods import NeuROKMethod
from neurok_ros.evaluation.pose_pairs import TARGET_SAMPLES, pair_meshes, pose_pair, target_samples
from neurok_ros.geometry.metrics import DEFAULT_SEED, metrics_in_frame
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.rigid_alignment import apply_rigid, rigid_alignment
from neurok_ros.kinematics.instance import load_default_model

METRIC_SAMPLES = 100_000
SEED = 0


def rigid_residual(before: np.ndarray, after: np.ndarray) -> float:
    """Mean distance of `after` (n, 3) from the best rigid motion of `before` (n, 3) (Kabsch)."""
    moved = torch.as_tensor(before, dtype=torch.float64)[None]
    target = torch.as_tensor(after, dtype=torch.float64)
    rotation, translation = rigid_alignment(moved, target)
    return float((apply_rigid(rotation, translation, moved)[0] - target).norm(dim=1).mean())


def edge_stretch(before: np.ndarray, after: np.ndarray, faces: np.ndarray) -> list[float]:
    """1st, 50th and 99th percentile of |edge after| / |edge before| over the faces' edges."""
    edges = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    length = lambda v: np.linalg.norm(v[edges[:, 0]] - v[edges[:, 1]], axis=1)  # noqa: E731
    ratio = length(after) / np.maximum(length(before), 1e-12)
    return [float(x) for x in np.percentile(ratio, [1, 50, 99])]


def check_pair(method: NeuROKMethod, root: Path, name: str) -> dict:
    inst = load_instance(root / name)
    pair = pose_pair(name, inst, SEED)
    source, target, faces = pair_meshes(inst, pair)
    observed = target_samples(target, faces, SEED, name, TARGET_SAMPLES)
    fitted = method.predict(source, faces, observed).vertices
    size = float(np.ptp(source, axis=0).max())
    transform = NormalisingTransform.from_vertices(source)
    parts = []
    for part in np.unique(inst.part_ids):
        mask = inst.part_ids == part
        parts.append({"part": int(part), "vertices": int(mask.sum()),
                      "true_travel": float(np.linalg.norm(target[mask] - source[mask], axis=1).mean() / size),
                      "fit_travel": float(np.linalg.norm(fitted[mask] - source[mask], axis=1).mean() / size),
                      "error": float(np.linalg.norm(fitted[mask] - target[mask], axis=1).mean() / size),
                      "non_rigid": rigid_residual(source[mask], fitted[mask]) / size})
    scores = {key: metrics_in_frame((vertices, faces), (target, faces), transform, METRIC_SAMPLES, DEFAULT_SEED)
              for key, vertices in (("neurok", fitted), ("identity", source))}
    return {**pair.to_dict(), "parts": parts, "edge_stretch_p1_p50_p99": edge_stretch(source, fitted, faces),
            "metrics": scores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--checkpoint", help="default: the shipped model")
    parser.add_argument("files", nargs="+", help="instance files of the dataset, e.g. drawer_0128.npz")
    args = parser.parse_args()
    torch.manual_seed(0)
    model, _ = load_default_model(args.checkpoint)
    method = NeuROKMethod("neurok", "NeuROK", "the evaluation's NeuROK row", model)
    pairs = [check_pair(method, Path(args.data), name) for name in args.files]
    for pair in pairs:
        iou = {key: score["iou"] for key, score in pair["metrics"].items()}
        print(pair["file"], pair["pose_a"], "->", pair["pose_b"], "edge stretch",
              np.round(pair["edge_stretch_p1_p50_p99"], 3), "IoU", iou)
        for part in pair["parts"]:
            print("  part {part}: {vertices} vertices, travel {true_travel:.3f} -> fit {fit_travel:.3f}, "
                  "error {error:.3f}, non-rigid {non_rigid:.3f}".format(**part))
    Path(args.out).write_text(json.dumps({"checkpoint": args.checkpoint or "shipped", "seed": SEED,
                                          "pairs": pairs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
