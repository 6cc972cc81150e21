"""`neurok metrics SOURCE TARGET`: Chamfer-L1/L2 and volumetric IoU of two mesh files (docs/architecture.md §4).

Both meshes are normalised by SOURCE's bounding box (centre, longest side 1).
"""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "metrics",
        help="Chamfer-L1, Chamfer-L2 and volumetric IoU between two meshes",
        description="Compare TARGET with SOURCE: Chamfer-L1/L2 on area-uniform surface samples and "
                    "volumetric IoU by generalised winding number, both shapes normalised by "
                    "SOURCE's bounding box (centre at the origin, longest side 1). IoU is the reference "
                    "SOURCE's: undefined (nan; null in JSON) when SOURCE encloses no volume, e.g. a flat sheet.",
    )
    parser.add_argument("source", help="source mesh file (obj, ply, stl, glb, gltf, off)")
    parser.add_argument("target", help="target mesh file, same frame and units as SOURCE")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--samples", type=_positive_int, default=100_000, metavar="N",
                        help="surface samples per shape and IoU points (default: 100000)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="random seed (default: the library's fixed seed)")
    parser.set_defaults(func=run)


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def run(args) -> int:
    from neurok_ros.geometry.metrics import DEFAULT_SEED, mesh_metrics
    from neurok_ros.strict_json import json_line

    seed = DEFAULT_SEED if args.seed is None else args.seed
    result = mesh_metrics(args.source, args.target, num_samples=args.samples, seed=seed)
    if args.json:
        print(json_line(result))
    else:
        print(f"chamfer_l1 {result['chamfer_l1']:.6g}  chamfer_l2 {result['chamfer_l2']:.6g}  "
              f"iou {result['iou']:.4f}")
    return 0
