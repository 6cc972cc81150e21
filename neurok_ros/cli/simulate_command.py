"""`neurok simulate MESH ...`: predict how MESH moves under gravity, elasticity and contact actions.

    neurok simulate laptop.ply --contact 0 0.2 0.25 --velocity 0 0.05 0 --duration 2 --fps 30 \\
        --out traj.npz --gif traj.gif --glb traj.glb --json

traj.npz: vertices (T, n, 3) float32 in MESH's frame, units and vertex order; faces (m, 3); times
(T,) s with T = round(duration * fps) + 1 (t = 0 included); q (T, k) the simulated coordinates (an
object with joints: its joint values, rad or m from the input pose, in the readout's joint order;
otherwise the latent chart's: the instance's latent coordinates, then the six rigid coordinates of
the free body that carries them); energy (T, 3) J:
kinetic, potential, total. Defaults: config/simulation.yaml.
"""
from __future__ import annotations

from neurok_ros.strict_json import json_line


def register(subparsers) -> None:
    from neurok_ros.cli.model_options import add_model_options
    from neurok_ros.cli.setting_flags import add_setting_flags

    parser = subparsers.add_parser(
        "simulate", help="simulate a mesh's motion (rigid parts in joint coordinates, or the learned latent "
                         "space) and write traj.npz",
        description="Simulate MESH from rest under gravity and contact actions: an object with joints (its "
                    "readout, see --articulation) as rigid parts in its joint coordinates, any other in the "
                    "learned latent space, a free body with its strain energy. Positions are in MESH's frame, taken as "
                    "metres; unset options come from config/simulation.yaml.")
    parser.add_argument("mesh", help="mesh file (ply, obj, stl, off, glb)")
    parser.add_argument("--contact", nargs=3, type=float, action="append", metavar=("X", "Y", "Z"),
                        help="contact point at t = 0 (repeatable); snaps to the surface")
    parser.add_argument("--velocity", nargs=3, type=float, action="append", metavar=("VX", "VY", "VZ"),
                        help="initial velocity of the matching --contact, m/s (repeatable; "
                             "none: the contacts start at rest)")
    parser.add_argument("--drag-path", metavar="FILE",
                        help="drag path (.csv rows t,x,y,z[,x2,y2,z2...] or .npz times/positions); "
                             "see docs/physics.md")
    parser.add_argument("--force", nargs=8, type=float, action="append",
                        metavar=("X", "Y", "Z", "FX", "FY", "FZ", "T0", "T1"),
                        help="push with force (FX, FY, FZ) N at the surface point nearest (X, Y, Z) for "
                             "T0 <= t <= T1 s (repeatable)")
    parser.add_argument("--pin-box", nargs=6, type=float, action="append",
                        metavar=("X0", "Y0", "Z0", "X1", "Y1", "Z1"),
                        help="hold the surface inside this box (mesh frame, m) at its input pose, e.g. a "
                             "base on a table or a frame in a wall (repeatable; its spring: --pin-stiffness)")
    parser.add_argument("--articulation", default="auto", metavar="auto|none|FILE",
                        help="auto (default): read the parts and joints (neurok articulate) and, when there are "
                             "joints, simulate the rigid parts in joint coordinates; none: no readout, the "
                             "learned latent chart (a free soft body); FILE: a readout saved by "
                             "`neurok articulate --out`")
    parser.add_argument("--config", help="settings YAML replacing config/simulation.yaml")
    parser.add_argument("--out", required=True, help="trajectory .npz")
    parser.add_argument("--gif", help="also render the motion to this GIF")
    parser.add_argument("--glb", help="also write an animated glTF binary (morph targets) here")
    parser.add_argument("--energy-plot", metavar="PNG", help="also plot T, V and T + V against time here")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--threads", type=int,
                        help="torch CPU threads (default: torch's, all cores). Use 1 on a busy machine, "
                             "where more threads than free cores slow the run down")
    add_setting_flags(parser)
    add_model_options(parser)
    parser.set_defaults(func=run)


def _conditions(args):
    """ContactConditions from --contact / --velocity / --drag-path, or None for free motion."""
    import numpy as np

    from neurok_ros.dynamics.contact_conditions import ContactConditions
    from neurok_ros.errors import ActionError
    from neurok_ros.simulation.drag_path import read_drag_path

    contacts = np.array(args.contact or [], dtype=np.float64).reshape(-1, 3)
    velocities = np.array(args.velocity or [], dtype=np.float64).reshape(-1, 3)
    if len(velocities) and len(velocities) != len(contacts):
        raise ActionError(f"got {len(contacts)} --contact and {len(velocities)} --velocity: give one velocity "
                          f"per contact, or none")
    path_times, path_positions = np.zeros(0), None
    if args.drag_path:
        path_times, path_positions = read_drag_path(args.drag_path)
        if not len(contacts):
            contacts = path_positions[0].copy()
        elif path_positions.shape[1] != len(contacts):
            raise ActionError(f"the drag path has {path_positions.shape[1]} contact(s) but {len(contacts)} "
                              f"--contact were given")
    if not len(contacts):
        return None
    if not len(velocities):
        velocities = np.zeros_like(contacts)
    if path_positions is None:
        path_positions = np.zeros((0, len(contacts), 3))
    return ContactConditions(contacts, velocities, path_times, path_positions).validate()


def run(args) -> int:
    import sys
    import time

    import numpy as np
    import torch

    from neurok_ros.articulation.articulation import chosen_articulation
    from neurok_ros.articulation.readout import read_articulation
    from neurok_ros.cli.model_options import load_model_from_args
    from neurok_ros.cli.setting_flags import setting_overrides
    from neurok_ros.geometry.mesh_io import load_mesh
    from neurok_ros.kinematics.instance import encode_mesh
    from neurok_ros.simulation.predict import bind_actions, predict_motion
    from neurok_ros.simulation.settings import default_settings, pin_boxes, push_specs, settings_from

    started = time.perf_counter()
    if args.threads is not None:
        if args.threads < 1:
            from neurok_ros.errors import NeurokInputError

            raise NeurokInputError(f"--threads must be at least 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    base = default_settings(args.config)
    settings = settings_from({**setting_overrides(args), "pushes": push_specs(args.force) if args.force else None,
                              "pins": pin_boxes(args.pin_box) if args.pin_box else None}, base=base)
    conditions = _conditions(args)
    V, F = load_mesh(args.mesh)
    bind_actions(V, F, conditions, settings)  # reject far contacts before loading the model
    model, _ = load_model_from_args(args)
    instance = encode_mesh(model, V, F)
    prediction = predict_motion(instance, conditions, settings, articulation=chosen_articulation(
        args.articulation, len(V), lambda: read_articulation(instance)))
    np.savez(args.out, vertices=prediction.vertices, faces=prediction.faces.astype(np.int64),
             times=prediction.times, q=prediction.q.astype(np.float32), energy=prediction.energy)
    written = [args.out]
    if args.gif:
        from neurok_ros.visualisation.mesh_animation import render_gif

        render_gif(prediction.vertices, prediction.faces, args.gif, fps=min(settings.fps, 50.0),
                   times=prediction.times)
        written.append(args.gif)
    if args.glb:
        from neurok_ros.visualisation.gltf_animation import write_animated_glb

        write_animated_glb(args.glb, prediction.vertices, prediction.faces, prediction.times)
        written.append(args.glb)
    if args.energy_plot:
        from neurok_ros.visualisation.energy_plot import plot_energy

        plot_energy(prediction.times, prediction.energy, args.energy_plot, title=f"neurok simulate {args.mesh}",
                    work=prediction.work, dissipated=prediction.dissipated)
        written.append(args.energy_plot)
    summary = dict(prediction.summary)
    summary["seconds"] = {**summary["seconds"], "wall": round(time.perf_counter() - started, 3)}
    summary["vertices"] = int(len(V))
    summary["outputs"] = written
    if args.json:
        print(json_line(summary))
    else:
        residual = summary["contact_velocity_residual"]
        print(f"neurok simulate: {summary['frames']} frames of {len(V)} vertices over {settings.duration:g} s; "
              f"energy drift {summary['energy_drift']:.2%}"
              + ("" if residual is None else f", contact velocity residual {residual:.2%}")
              + f"; {summary['seconds']['wall']:.1f} s; wrote {', '.join(written)}")
        if summary.get("actions_on_held_parts_note"):
            print(f"neurok simulate: warning: {summary['actions_on_held_parts_note']}", file=sys.stderr)
    return 0
