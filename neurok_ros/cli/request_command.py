"""`neurok request MESH --contact X Y Z --velocity VX VY VZ --out traj.npz`: ask neurok_node for
a trajectory through its ROS 2 topics and save it.

With --spawn-node the node is started in this process first (parameters from config/neurok.yaml,
--params-file and --param); otherwise a running node named by --server answers. The .npz holds
frames (T, N, 3) float32 metres and times (T,) s in the mesh frame, vertices / faces of the mesh
whose vertices are the columns, frame_id, stamp, latency_s, and the contacts sent; for an object
with joints also joint_names, joint_positions (T, J) and joint_velocities (T, J) (--joints prints them).
"""
from __future__ import annotations

import time

from neurok_ros.strict_json import json_line


def register(subparsers) -> None:
    parser = subparsers.add_parser("request", help="send a mesh and an action to neurok_node, save the trajectory")
    parser.add_argument("mesh", help="mesh file (ply, obj, stl, glb, off), sent with its bytes embedded")
    parser.add_argument("--contact", nargs=3, type=float, action="append", required=True, metavar=("X", "Y", "Z"),
                        help="contact position, metres, mesh frame (repeat for several contacts)")
    parser.add_argument("--velocity", nargs=3, type=float, action="append", metavar=("VX", "VY", "VZ"),
                        help="initial velocity of the contact of the same rank, m/s (default 0)")
    parser.add_argument("--scan", metavar="FILE",
                        help="first send this scan of the object now (point cloud or scanned mesh, mesh frame; as "
                             "`neurok fit`) on ~/observation: the push starts from the fitted state")
    parser.add_argument("--out", default="trajectory.npz", help="output .npz (default trajectory.npz)")
    parser.add_argument("--frame-id", default="object", help="mesh frame (default object)")
    parser.add_argument("--server", default="/neurok_node", help="the node's fully qualified name")
    parser.add_argument("--spawn-node", action="store_true", help="start neurok_node in this process")
    parser.add_argument("--params-file", action="append", default=[], metavar="YAML",
                        help="with --spawn-node: ROS 2 params file (repeatable)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME:=VALUE",
                        help="with --spawn-node: one parameter, e.g. duration:=1.0 (repeatable)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each answer")
    parser.add_argument("--joints", action="store_true",
                        help="also print the predicted joint values (objects with joints: ~/joint_trajectory)")
    parser.add_argument("--json", action="store_true", help="print one JSON summary")
    parser.set_defaults(func=run)


def run(args) -> int:
    import os

    import numpy as np

    from neurok_ros.errors import NeurokInputError
    from neurok_ros.ros.node_in_process import request_trajectory

    contacts = np.array(args.contact, dtype=np.float64)
    velocities = np.array(args.velocity or [], dtype=np.float64).reshape(-1, 3)
    if len(velocities) not in (0, len(contacts)):
        raise NeurokInputError(f"{len(contacts)} --contact but {len(velocities)} --velocity: give one velocity "
                               "per contact, or none")
    if len(velocities) == 0:
        velocities = np.zeros_like(contacts)
    if not os.path.isfile(args.mesh):
        raise FileNotFoundError(2, "no such file", args.mesh)

    scan = None
    if args.scan:
        from neurok_ros.geometry.point_cloud_io import load_points

        scan, _ = load_points(args.scan)
    started = time.perf_counter()
    try:
        reply, mesh_state, observed = request_trajectory(args.mesh, contacts, velocities, spawn_node=args.spawn_node,
                                                         server=args.server, params_files=args.params_file,
                                                         parameters=args.param, frame_id=args.frame_id, scan=scan,
                                                         timeout=args.timeout)
        reply.save(args.out, contacts=contacts, velocities=velocities)
    except TimeoutError as exc:
        import sys

        print(f"neurok request: error: {exc}", file=sys.stderr)
        return 1
    summary = {"out": args.out, "frames": int(reply.frames.shape[0]), "vertices": int(reply.frames.shape[1]),
               "frame_id": reply.frame_id, "latency_s": round(reply.latency_s, 3),
               "encode_s": float(mesh_state.get("mesh_encode_s", "nan")),
               "simulate_s": float(reply.diagnostics.get("simulate_s", "nan")),
               "total_s": round(time.perf_counter() - started, 3)}
    if args.joints and reply.joints is not None:
        summary["joints"] = {name: {"final": float(reply.joints["positions"][-1, i]),
                                    "min": float(reply.joints["positions"][:, i].min()),
                                    "max": float(reply.joints["positions"][:, i].max())}
                             for i, name in enumerate(reply.joints["names"])}
    if observed is not None:
        summary.update(observation_moved=observed.get("observation_moved") == "true",
                       observation_residual_p90_m=float(observed.get("observation_residual_p90_m", "nan")),
                       observation_fit_s=float(observed.get("observation_fit_s", "nan")))
    if args.json:
        print(json_line(summary))
    else:
        print(f"neurok request: {summary['frames']} frames x {summary['vertices']} vertices in frame "
              f"'{summary['frame_id']}', action-to-trajectory {summary['latency_s']:.2f} s "
              f"(mesh encoded in {summary['encode_s']:.2f} s"
              + ("" if observed is None else f"; the scan {'moved' if summary['observation_moved'] else 'kept'} the "
                 f"state, fitted in {summary['observation_fit_s']:.2f} s") + f"); wrote {args.out}")
        if args.joints:
            for name, values in summary.get("joints", {}).items():
                print(f"  {name}: {values['final']:+.4f} at the end (range {values['min']:+.4f} .. "
                      f"{values['max']:+.4f}; rad or m from the input pose)")
            if "joints" not in summary:
                print("  no joints: the object was simulated in the learned latent chart")
    return 0
