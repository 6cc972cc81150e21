"""The octree IoU of geometry/occupancy.py against point-by-point winding numbers, on the evaluation's
own pairs: for the identity row of an `neurok eval --json` record file (prediction = SOURCE), recompute
each pair's metrics with `metrics_in_frame` (the octree for closed meshes) and count, over the same
100k IoU points, the points where the octree and the point-by-point winding number disagree, for
TARGET and for SOURCE. Prints one JSON line per pair, then a summary line.

    .venv/bin/python scripts/occupancy_check.py DATA RECORDS.json [--limit N]
    e.g. /tmp/neurok_data docs/eval_200_pairs_rigid_records.json
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from neurok_ros.data.instance_format import load_instance
from neurok_ros.evaluation.pose_pairs import PosePair, pair_meshes
from neurok_ros.geometry.metrics import DEFAULT_NUM_SAMPLES, DEFAULT_SEED, metrics_in_frame, union_box_points
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.occupancy import free_cell_answers, is_closed_surface, winding_inside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("records")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    stored = json.loads(Path(args.records).read_text())
    if "random-heading" in stored["command"] or "partial-view" in stored["command"]:
        raise SystemExit("occupancy_check: take a record file of the dataset's heading and full views")
    rows = [r for r in stored["records"] if r["method"] == "identity"][:args.limit]
    totals = {"pairs": 0, "closed": 0, "iou_equal": 0, "points_differing": 0, "octree_s": 0.0, "pointwise_s": 0.0}
    for row in tqdm(rows, desc="pairs", unit="pair"):
        instance = load_instance(Path(args.data) / row["file"])
        pair = PosePair(row["file"], row["category"], row["pose_a"], row["pose_b"], row["num_poses"])
        source, target, faces = pair_meshes(instance, pair)
        transform = NormalisingTransform.from_vertices(source)
        scores = metrics_in_frame((source, faces), (target, faces), transform, DEFAULT_NUM_SAMPLES, DEFAULT_SEED)
        same = (scores["iou"] is None or np.isnan(scores["iou"])) if row["iou"] is None else scores["iou"] == row["iou"]
        closed = is_closed_surface(faces)
        line = {"file": row["file"], "closed": closed, "iou_stored": row["iou"], "iou_now": scores["iou"],
                "iou_equal": bool(same)}
        if closed:
            V_a, V_b = transform.apply(target), transform.apply(source)
            points = union_box_points(V_a, V_b, DEFAULT_NUM_SAMPLES, DEFAULT_SEED)
            F = np.asarray(faces, dtype=np.int64)
            for name, V in (("target", V_a), ("source", V_b)):
                started = time.perf_counter()
                octree = free_cell_answers(V, F, points)
                middle = time.perf_counter()
                pointwise = winding_inside(V, F, points)
                totals["octree_s"] += middle - started
                totals["pointwise_s"] += time.perf_counter() - middle
                line[f"{name}_points_differing"] = int(np.count_nonzero(octree != pointwise))
                totals["points_differing"] += line[f"{name}_points_differing"]
        totals["pairs"] += 1
        totals["closed"] += closed
        totals["iou_equal"] += bool(same)
        print(json.dumps(line), flush=True)
    print(json.dumps({"summary": totals}))


if __name__ == "__main__":
    main()
