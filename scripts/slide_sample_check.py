"""Prior samples of unseen sliding objects: does a draw slide a drawer or a sash, and rigidly?

For the first N val instances of each named category, the rest mesh is encoded and 32 states are
drawn from the checkpoint's prior (its posterior bank when it has one, as `neurok sample` draws).
For every prismatic joint of the generator and every draw: the slide, the mean displacement of the
joint's child parts along the joint axis, from the rest pose, as a fraction of the largest such
slide among the instance's own frames (what training saw), and how far the child parts are from
moving rigidly (mean residual of their best rigid motion, over the object's size). A draw is "rigid
and in range" when that residual is under 1 % and the slide within [-0.1, 1.1] of that travel.

    .venv/bin/python scripts/slide_sample_check.py --data DATASET_DIR --out docs/model/slide_samples.json \\
        shipped=neurok_ros/assets/neurok_default.pt [NAME=CHECKPOINT ...] [--categories drawer window]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from neurok_ros.data.instance_format import load_instance
from neurok_ros.evaluation.pose_pairs import category_of
from neurok_ros.kinematics.instance import encode_mesh, load_default_model
from part_fit_check import rigid_residual  # scripts/, beside this file

DRAWS = 32
RIGID = 0.01  # of the object's size
OPEN = 0.25   # of the joint's travel in the data


def joint_draws(model, path: Path) -> list[tuple[float, float]]:
    """(slide / travel, non-rigid residual / size) for every prismatic joint and draw of one instance."""
    inst = load_instance(path)
    rest = inst.rest_vertices.astype(np.float64)
    size = float(np.ptp(rest, axis=0).max())
    instance = encode_mesh(model, rest, inst.faces)
    draws = instance.decode(z=instance.sample_latents(DRAWS, seed=0))
    rows = []
    for joint in (j for j in inst.joints if j["type"] == "prismatic"):
        moving = np.isin(inst.part_ids, joint["child_parts"])
        axis = np.asarray(joint["axis"], dtype=np.float64)
        travel = float(np.abs((inst.frames[:, moving].mean(1) - rest[moving].mean(0)) @ axis).max())
        if travel < 1e-3 * size:
            continue
        for drawn in draws:
            slide = float((drawn[moving].mean(0) - rest[moving].mean(0)) @ axis) / travel
            rows.append((slide, rigid_residual(rest[moving], drawn[moving]) / size))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder")
    parser.add_argument("--out", default="docs/model/slide_samples.json")
    parser.add_argument("--instances", type=int, default=6, help="val instances per category")
    parser.add_argument("--categories", nargs="+", default=["drawer", "window"])
    parser.add_argument("checkpoints", nargs="+", metavar="NAME=CHECKPOINT")
    args = parser.parse_args()
    val = json.loads((Path(args.data) / "manifest.json").read_text())["splits"]["val"]
    results = {}
    for item in args.checkpoints:
        name, _, path = item.partition("=")
        model, _ = load_default_model(path)
        results[name] = {"checkpoint": path, "categories": {}}
        for category in args.categories:
            files = [f for f in val if category_of(f) == category][:args.instances]
            rows = np.array([row for f in files for row in joint_draws(model, Path(args.data) / f)])
            slide, residual = rows[:, 0], rows[:, 1]
            valid = (residual < RIGID) & (slide > -0.1) & (slide < 1.1)
            entry = {"instances": len(files), "joint_draws": len(rows),
                     "slide_median": float(np.median(slide)), "slide_p90": float(np.percentile(slide, 90)),
                     "non_rigid_median": float(np.median(residual)), "rigid_in_range": float(valid.mean()),
                     "rigid_and_open": float((valid & (slide > OPEN)).mean())}
            results[name]["categories"][category] = entry
            print(f"{name} {category}: {entry['joint_draws']} joint-draws, slide / travel median "
                  f"{entry['slide_median']:.2f}, 90th percentile {entry['slide_p90']:.2f}; non-rigid median "
                  f"{entry['non_rigid_median']:.4f}; rigid and in range {entry['rigid_in_range']:.2f}, "
                  f"of them open past {OPEN:.0%} {entry['rigid_and_open']:.2f}", flush=True)
    Path(args.out).write_text(json.dumps({"draws": DRAWS, "rigid": RIGID, "open": OPEN, **results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
