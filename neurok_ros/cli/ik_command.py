"""`neurok ik SOURCE TARGET`: fit the learned kinematic space of SOURCE to TARGET's surface.

TARGET is SOURCE in another pose (same vertex count and order, used only for the score): the fit
sees area-uniform samples of TARGET's surface, as it would see a scan, never its vertices. With
--camera it sees only the samples visible from that point (one depth image) and fits the one-sided
Chamfer from them (IKConfig.partial). With --fits K it fits K times, each from its own encoding samples
and starts, and reports the vertex mean (fit_ensemble) and the fits' spread. A SOURCE of several
connected pieces is fitted as rigid pieces (IKConfig.rigid_pieces; --no-rigid-pieces: as one surface),
and then each group of them is registered on TARGET's samples (IKConfig.piece_steps; --piece-steps 0: not)
and takes its link's motion: rest, its own or another group's (IKConfig.piece_links; --piece-links off: not).
Those and the other fitting options are IKConfig's fields (cli/fit_options.py).

With --articulation FILE or auto (SOURCE's readout, as `neurok articulate` gives it), an object
with joints is fitted in its joint coordinates first, every part rigid (kinematics/joint_pose_fit.py);
the joint lines are refined where their parts moved far (--articulation-out writes them), the
learned fit then starts from that pose, and of SOURCE, the joint pose and the learned fit the
one nearest the observed samples by the fit's own objective is kept ("kept": rest, joints or learned;
kinematics/joints_first_ik.py). The fitted joint values are reported ("joints").
"""
from __future__ import annotations

import time


def register(subparsers) -> None:
    from neurok_ros.cli.fit_options import add_fit_options
    from neurok_ros.cli.model_options import add_model_options

    parser = subparsers.add_parser("ik", help="inverse kinematics: fit SOURCE's learned pose space to TARGET")
    parser.add_argument("source", help="mesh in the pose the model encodes")
    parser.add_argument("target", help="the same mesh (same vertex count and order) in another pose")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", help="write the fitted mesh here (ply, obj, stl, off, glb)")
    parser.add_argument("--target-points", type=int, default=2048, help="surface samples of TARGET the fit sees")
    parser.add_argument("--samples", type=int, default=100_000, help="samples for the reported metrics")
    parser.add_argument("--camera", type=float, nargs=3, metavar=("X", "Y", "Z"),
                        help="see only TARGET's surface visible from this point (TARGET's frame and units), as "
                             "one depth image, and fit the one-sided Chamfer from it")
    parser.add_argument("--fits", type=int, default=1, metavar="K",
                        help="fit K times (own encoding samples and starts each) and report the vertex mean; "
                             "'spread' is then the fits' mean RMS vertex distance from it (SOURCE-normalised)")
    parser.add_argument("--articulation", default="auto", metavar="auto|none|FILE",
                        help="auto (default: SOURCE's readout) or FILE (a readout saved by `neurok articulate "
                             "--out`, or one you corrected): fit the joint values first, each part rigid, then "
                             "the learned deformation from that pose, keeping the closer of the two; none: the "
                             "learned fit alone (docs/articulation.md compares them)")
    parser.add_argument("--articulation-out", metavar="FILE",
                        help="write the articulation with the joint lines as the fit refined them here (the "
                             "format of `neurok articulate --out`): a second pose shows where a joint's line is")
    parser.add_argument("--seed", type=int, default=0)
    add_fit_options(parser, joints=True)
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    import numpy as np

    from neurok_ros.articulation.articulation import chosen_articulation
    from neurok_ros.articulation.readout import articulate
    from neurok_ros.cli.fit_options import fit_config
    from neurok_ros.cli.model_options import load_model_from_args
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
    from neurok_ros.geometry.metrics import metrics_in_frame
    from neurok_ros.geometry.rigid_pieces import welded_pieces
    from neurok_ros.geometry.surface_sampling import sample_surface
    from neurok_ros.geometry.visibility import visible_samples
    from neurok_ros.kinematics.ik_config import IKConfig
    from neurok_ros.kinematics.instance import EncodingConfig
    from neurok_ros.kinematics.joints_first_ik import fit_joints_first
    from neurok_ros.strict_json import json_line

    started = time.perf_counter()
    V_s, F_s = load_mesh(args.source)
    V_t, F_t = load_mesh(args.target)
    if V_s.shape != V_t.shape:
        raise NeurokInputError(f"SOURCE has {len(V_s)} vertices and TARGET {len(V_t)}: TARGET must be SOURCE "
                               f"in another pose, with the same vertices in the same order")
    if args.target_points < 1 or args.samples < 1:
        raise NeurokInputError("--target-points and --samples must be positive")
    if args.fits < 1:
        raise NeurokInputError(f"--fits must be a positive integer, got {args.fits}")
    if args.articulation_out and args.articulation == "none":
        raise NeurokInputError("--articulation-out needs an articulation: --articulation auto or FILE")
    ik = fit_config(args, IKConfig(seed=args.seed, partial=args.camera is not None,
                                   hold_joint_limits=args.hold_joint_limits))
    model, _ = load_model_from_args(args)
    rng = np.random.default_rng(args.seed)
    if args.camera is None:
        observed = sample_surface(V_t, F_t, args.target_points, rng).points
    else:
        observed = visible_samples(V_t, F_t, np.asarray(args.camera), args.target_points, rng)
    articulation = chosen_articulation(args.articulation, len(V_s), lambda: articulate(model, V_s, F_s))
    fit = fit_joints_first(model, V_s, F_s, observed, articulation, ik, args.fits, EncodingConfig())
    joints, ensemble, fitted = fit.joints, fit.ensemble, fit.vertices
    instance = ensemble.members[0][0]
    seconds = time.perf_counter() - started
    if args.out:
        save_mesh(args.out, fitted, F_s)
    if args.articulation_out:
        (articulation if joints is None else joints.articulation).save(args.articulation_out)
    scores = metrics_in_frame((fitted, F_s), (V_t, F_t), instance.transform, args.samples)
    spread = float(ensemble.spread.mean()) * instance.transform.scale if args.fits > 1 else None
    rigid = int(welded_pieces(V_s, F_s).max()) + 1 if ik.rigid_pieces else 0  # the pieces the fit moves
    summary = {**scores, "k": instance.k, "k_q": instance.k_q, "fits": args.fits, "spread": spread,
               "rigid_pieces": rigid, "joints": joints.joint_values() if joints else None,
               "kept": fit.kept, "seconds": round(seconds, 3)}
    if args.json:
        print(json_line(summary))
    else:
        print(f"neurok ik: Chamfer-L1 {scores['chamfer_l1']:.5f}, Chamfer-L2 {scores['chamfer_l2']:.6f}, "
              f"IoU {scores['iou']:.4f}; k {instance.k}, k_q {instance.k_q}; "
              + (f"mean of {args.fits} fits (spread {spread:.5f}); " if args.fits > 1 else "")
              + (f"{rigid} rigid pieces; " if rigid else "")
              + (f"joints {', '.join(f'{k} {v:.4g}' for k, v in joints.joint_values().items())} (kept: {fit.kept}); "
                 if joints else "")
              + f"fit in {seconds:.2f} s"
              + (f"; wrote {args.out}" if args.out else "")
              + (f"; wrote {args.articulation_out}" if args.articulation_out else ""))
    return 0

