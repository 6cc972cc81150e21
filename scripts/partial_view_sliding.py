"""The one-view sliding measurement of docs/eval_partial_view.md: for test pairs of `neurok eval
--partial-view` (same pose pair, TARGET samples and camera, seed 0), fit the shipped model as the NeuROK
row does and print one JSON line per pair: IoU and Chamfer-L1 of the fit; the mean vertex error of the
fit and the true motion, on TARGET's vertices seen from the camera and on the hidden ones (fractions of
SOURCE's bounding-box diagonal); and for SOURCE (rest), the fit and TARGET itself, the seen points'
mean squared distance to the surface and the visible surface's to the seen points (diagonal^2).

    .venv/bin/python scripts/partial_view_sliding.py DATA FILE:POSE_A:POSE_B [...]
    e.g. /tmp/neurok_data box_lid_0196.npz:0:6 refrigerator_0065.npz:7:1 cabinet_0017.npz:11:8
"""
import json
import sys
from pathlib import Path

import igl
import numpy as np
import torch
from scipy.spatial import cKDTree

from neurok_ros.data.instance_format import load_instance
from neurok_ros.evaluation.methods import NeuROKMethod
from neurok_ros.evaluation.pose_pairs import pair_camera, pose_vertices, target_samples
from neurok_ros.geometry.metrics import DEFAULT_SEED, metrics_in_frame
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.geometry.visibility import visible_from, visible_samples
from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT, EncodingConfig, load_default_model
from neurok_ros.kinematics.inverse_kinematics import IKConfig


def seen_vertices(vertices, faces, camera, rng) -> np.ndarray:
    """(n,) bool: whether the surface sample nearest each vertex is visible from `camera`."""
    samples = sample_surface(vertices, faces, 20_000, rng)
    visible = visible_from(vertices, faces, samples, camera)
    return visible[cKDTree(samples.points).query(vertices)[1]]


def view_errors(vertices, faces, observed, camera, diagonal: float, rng) -> dict:
    """Seen points to the surface, and the surface's visible samples to the seen points (diagonal^2)."""
    shown = visible_samples(vertices, faces, camera, 2048, rng)
    to_seen = np.square(cKDTree(observed).query(shown)[0]).mean()
    return {"seen_to_surface": float(igl.point_mesh_squared_distance(observed, vertices, faces)[0].mean()) / diagonal ** 2,
            "visible_to_seen": float(to_seen) / diagonal ** 2}


def main(data: str, pairs: list[str]) -> None:
    torch.set_num_threads(1)
    model, _ = load_default_model(DEFAULT_CHECKPOINT)
    method = NeuROKMethod("neurok", "NeuROK", "", model, EncodingConfig(seed=0), IKConfig(seed=0, partial=True))
    for spec in pairs:
        name, a, b = spec.split(":")
        instance = load_instance(Path(data) / name)
        faces = np.asarray(instance.faces, dtype=np.int64)
        source, target = pose_vertices(instance, int(a)), pose_vertices(instance, int(b))
        observed = target_samples(target, faces, 0, name, 2048, partial_view=True)
        camera = pair_camera(target, 0, name)
        fitted = method.predict(source, faces, observed).vertices
        metrics = metrics_in_frame((fitted, faces), (target, faces), NormalisingTransform.from_vertices(source),
                                   100_000, DEFAULT_SEED)
        diagonal = float(np.linalg.norm(source.max(0) - source.min(0)))
        seen = seen_vertices(target, faces, camera, np.random.default_rng(0))
        error = np.linalg.norm(fitted - target, axis=1) / diagonal
        motion = np.linalg.norm(target - source, axis=1) / diagonal
        row = {"pair": spec, "iou": metrics["iou"], "chamfer_l1": metrics["chamfer_l1"],
               "fit_error_seen": float(error[seen].mean()), "fit_error_hidden": float(error[~seen].mean()),
               "true_motion_seen": float(motion[seen].mean()), "true_motion_hidden": float(motion[~seen].mean())}
        for label, vertices in (("rest", source), ("fit", fitted), ("target", target)):
            row[label] = view_errors(vertices, faces, observed, camera, diagonal, np.random.default_rng(1))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
