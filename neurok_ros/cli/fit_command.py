"""`neurok fit MESH SCAN`: the pose of MESH's object that a scan of it shows.

MESH is the object as the model encodes it (its own pose is q = 0). SCAN observes the same object
now, in MESH's frame and units (z up): a point cloud (.pcd, .ply, .xyz, .npy) or a scanned mesh of
any triangulation (geometry/point_cloud_io.py). Points on the surface the object stands on (a band
around the plane of MESH's lowest z) are left out (kinematics/scan_fit.py). The fit sees only the scan's points, with no
correspondence (`fit_pose`); with --partial the scan shows one side of the object (one depth
camera), so the fit minimises the one-sided Chamfer from the scan. It prints the fitted latent
coordinates and how far the scan's points lie from the fitted surface and from MESH as given; --out
writes the fitted mesh (MESH's vertices, in MESH's order, moved), which `neurok simulate` takes as
the state to start from. The fitting options (--trim, --no-rigid-pieces, --keep-starts...) are
IKConfig's fields, as in `neurok ik` and `neurok eval` (cli/fit_options.py). With --articulation
auto (the default) or FILE, as in `neurok ik`, the joint values are fitted first (each part rigid,
on the scan's object points), the learned fit starts from that pose, of MESH as given, the joint
pose and the learned fit the one nearest the scan is kept ("kept"), and the joint values are
printed ("joints"); --articulation none: the learned fit alone.
"""
from __future__ import annotations

import time


def register(subparsers) -> None:
    from neurok_ros.cli.fit_options import add_fit_options
    from neurok_ros.cli.model_options import add_model_options
    from neurok_ros.kinematics.scan_fit import SUPPORT_BAND

    parser = subparsers.add_parser("fit", help="fit MESH's learned pose space to a scan of the object")
    parser.add_argument("mesh", help="the object's mesh, in the pose the model encodes")
    parser.add_argument("scan", help="points of the object now, in MESH's frame and units: .pcd, .ply, .xyz/.txt/"
                                     ".pts, .npy, or a scanned mesh (obj, stl, off, glb)")
    parser.add_argument("--partial", action="store_true",
                        help="the scan shows one side of the object (one depth camera): one-sided Chamfer")
    parser.add_argument("--points", type=int, default=2048, help="scan points the fit sees (a seeded subset)")
    parser.add_argument("--support-band", type=float, default=None, metavar="F",
                        help="leave out scan points within F bounding-box diagonals of the plane of MESH's lowest z "
                             f"(the table it stands on); 0 keeps them (default {SUPPORT_BAND:g})")
    parser.add_argument("--out", help="write the fitted mesh here (ply, obj, stl, off, glb)")
    parser.add_argument("--png", help="also draw the scan over MESH and over the fitted shape here")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--articulation", default="auto", metavar="auto|none|FILE",
                        help="auto (default: MESH's readout) or FILE (a readout saved by `neurok articulate --out`): "
                             "fit the joint values first, each part rigid, then the learned deformation from that "
                             "pose; none: the learned fit alone (see neurok ik --help)")
    parser.add_argument("--seed", type=int, default=0)
    add_fit_options(parser, joints=True)
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from neurok_ros.articulation.articulation import chosen_articulation
    from neurok_ros.articulation.readout import articulate
    from neurok_ros.cli.fit_options import fit_config
    from neurok_ros.cli.model_options import load_model_from_args
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
    from neurok_ros.geometry.point_cloud_io import load_points
    from neurok_ros.kinematics.ik_config import IKConfig
    from neurok_ros.kinematics.instance import encode_mesh
    from neurok_ros.kinematics.scan_fit import SUPPORT_BAND, check_overlap, fit_scan_through_joints
    from neurok_ros.strict_json import json_line

    started = time.perf_counter()
    band = SUPPORT_BAND if args.support_band is None else args.support_band
    if args.points < 1:
        raise NeurokInputError("--points must be positive")
    if not 0 <= band < 1:
        raise NeurokInputError(f"--support-band must be in [0, 1), got {band:g}")
    ik = fit_config(args, IKConfig(seed=args.seed, partial=args.partial,
                                   hold_joint_limits=args.hold_joint_limits))
    V, F = load_mesh(args.mesh)
    scan, dropped = load_points(args.scan, seed=args.seed)
    check_overlap(scan, V, args.scan)  # before the model loads
    model, _ = load_model_from_args(args)
    articulation = chosen_articulation(args.articulation, len(V), lambda: articulate(model, V, F))
    through = fit_scan_through_joints(lambda posed: encode_mesh(model, posed, F), V, F, scan, articulation,
                                      ik.partial, args.points, ik.seed, band, ik.trim, ik.rigid_pieces, ik)
    fit, joints, kept = through.fit, through.joints, through.kept
    seconds = time.perf_counter() - started
    if args.out:
        save_mesh(args.out, fit.vertices, F)
    if args.png:
        from neurok_ros.visualisation.scan_fit_figure import render_scan_fit

        render_scan_fit(V, fit.vertices, F, scan, args.png)
    summary = {"moved": fit.moved, "full_space": fit.full_space, "k": len(fit.z), "k_q": len(fit.q),
               "q": [round(float(v), 6) for v in fit.q], "scan_points": len(scan), "dropped_points": dropped,
               "support_points": fit.support_points, "trim": ik.trim,
               "joints": joints.joint_values() if joints else None, "kept": kept,
               "residual_median": fit.residual[0], "residual_p90": fit.residual[1],
               "rest_residual_median": fit.rest_residual[0], "rest_residual_p90": fit.rest_residual[1],
               "seconds": round(seconds, 3)}
    if args.json:
        print(json_line(summary))
    else:
        state = "moved from MESH's pose" if fit.moved else "in MESH's own pose (q = 0)"
        print(f"neurok fit: the scan shows the object {state}; scan-to-surface distance median {fit.residual[0]:.4g}, "
              f"90th percentile {fit.residual[1]:.4g} (MESH as given: {fit.rest_residual[0]:.4g}, "
              f"{fit.rest_residual[1]:.4g}); {len(scan)} scan points"
              + (f" ({dropped} non-finite dropped)" if dropped else "")
              + (f", {fit.support_points} on the support surface left out" if fit.support_points else "")
              + (f"; joints {', '.join(f'{k} {v:.4g}' for k, v in joints.joint_values().items())} (kept: {kept})"
                 if joints else "")
              + f"; fit in {seconds:.2f} s" + (f"; wrote {args.out}" if args.out else ""))
    return 0
