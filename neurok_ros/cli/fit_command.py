"""`neurok fit MESH SCAN`: the pose of MESH's object that a scan of it shows.

MESH is the object as the model encodes it (its own pose is q = 0). SCAN observes the same object
now, in MESH's frame and units: a point cloud (.pcd, .ply, .xyz, .npy) or a scanned mesh of any
triangulation (geometry/point_cloud_io.py). The fit sees only the scan's points, with no
correspondence (`fit_pose`); with --partial the scan shows one side of the object (one depth
camera), so the fit minimises the one-sided Chamfer from the scan. It prints the fitted latent
coordinates and how far the scan's points lie from the fitted surface and from MESH as given; --out
writes the fitted mesh (MESH's vertices, in MESH's order, moved), which `neurok simulate` takes as
the state to start from.
"""
from __future__ import annotations

import time

OVERLAP_MARGIN = 0.5  # scan points within this many MESH bounding-box diagonals of MESH's box overlap it


def register(subparsers) -> None:
    from neurok_ros.cli.model_options import add_model_options

    parser = subparsers.add_parser("fit", help="fit MESH's learned pose space to a scan of the object")
    parser.add_argument("mesh", help="the object's mesh, in the pose the model encodes")
    parser.add_argument("scan", help="points of the object now, in MESH's frame and units: .pcd, .ply, .xyz/.txt/"
                                     ".pts, .npy, or a scanned mesh (obj, stl, off, glb)")
    parser.add_argument("--partial", action="store_true",
                        help="the scan shows one side of the object (one depth camera): one-sided Chamfer")
    parser.add_argument("--points", type=int, default=2048, help="scan points the fit sees (a seeded subset)")
    parser.add_argument("--out", help="write the fitted mesh here (ply, obj, stl, off, glb)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seed", type=int, default=0)
    add_model_options(parser)
    parser.set_defaults(func=run)


def check_overlap(scan, vertices, name: str) -> None:
    """Raise NeurokInputError unless most scan points (M, 3) lie near the mesh's bounding box: a scan
    in another frame or unit, or one of the whole scene, would otherwise give a meaningless fit."""
    import numpy as np

    from neurok_ros.errors import NeurokInputError

    low, high = vertices.min(axis=0), vertices.max(axis=0)
    margin = OVERLAP_MARGIN * float(np.linalg.norm(high - low))
    near = np.all((scan >= low - margin) & (scan <= high + margin), axis=1).mean()
    if near < 0.5:
        raise NeurokInputError(
            f"{name}: only {100 * near:.0f}% of the scan's points lie within {OVERLAP_MARGIN:g} bounding-box "
            f"diagonals of the mesh; the scan must be of the object alone (cropped), in the mesh's frame and units")


def distances(points, vertices, faces):
    """Median and 90th percentile (mesh units) of the points' (M, 3) distances to the surface."""
    import igl
    import numpy as np

    d = np.sqrt(igl.point_mesh_squared_distance(points, vertices, np.asarray(faces, dtype=np.int64))[0])
    return float(np.median(d)), float(np.percentile(d, 90))


def run(args) -> int:
    import numpy as np
    import torch

    from neurok_ros.cli.model_options import load_model_from_args
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
    from neurok_ros.geometry.point_cloud_io import load_points
    from neurok_ros.kinematics.instance import encode_mesh
    from neurok_ros.kinematics.inverse_kinematics import IKConfig, fit_pose
    from neurok_ros.strict_json import json_line

    started = time.perf_counter()
    if args.points < 1:
        raise NeurokInputError("--points must be positive")
    V, F = load_mesh(args.mesh)
    scan, dropped = load_points(args.scan, seed=args.seed)
    check_overlap(scan, V, args.scan)
    model, _ = load_model_from_args(args)
    instance = encode_mesh(model, V, F)
    rng = np.random.default_rng(args.seed)
    seen = scan if len(scan) <= args.points else scan[rng.choice(len(scan), args.points, replace=False)]
    result = fit_pose(instance, torch.as_tensor(instance.transform.apply(seen), dtype=torch.float32),
                      IKConfig(seed=args.seed, partial=args.partial))
    fitted = instance.decode(z=result.z)
    seconds = time.perf_counter() - started
    if args.out:
        save_mesh(args.out, fitted, F)
    fit_median, fit_p90 = distances(scan, fitted, F)
    rest_median, rest_p90 = distances(scan, V, F)
    summary = {"moved": not result.kept_rest, "full_space": result.full_space, "k": instance.k,
               "k_q": instance.k_q, "q": [round(float(v), 6) for v in result.q], "scan_points": len(scan),
               "dropped_points": dropped, "residual_median": fit_median, "residual_p90": fit_p90,
               "rest_residual_median": rest_median, "rest_residual_p90": rest_p90, "seconds": round(seconds, 3)}
    if args.json:
        print(json_line(summary))
    else:
        state = "moved from MESH's pose" if summary["moved"] else "in MESH's own pose (q = 0)"
        print(f"neurok fit: the scan shows the object {state}; scan-to-surface distance median {fit_median:.4g}, "
              f"90th percentile {fit_p90:.4g} (MESH as given: {rest_median:.4g}, {rest_p90:.4g}); "
              f"{len(scan)} scan points" + (f" ({dropped} non-finite dropped)" if dropped else "")
              + f"; fit in {seconds:.2f} s" + (f"; wrote {args.out}" if args.out else ""))
    return 0
