"""`neurok articulate MESH`: the parts and joints of an object from one static mesh (JSON, labels,
URDF, figure)."""
from __future__ import annotations


def register(subparsers) -> None:
    from neurok_ros.cli.model_options import add_head_options, add_model_options

    parser = subparsers.add_parser("articulate", help="read an object's parts and joints from one static mesh")
    parser.add_argument("mesh", help="mesh file (any frame, units and orientation)")
    parser.add_argument("--json", action="store_true", help="print the readout as one JSON object (last line)")
    parser.add_argument("--labels", help="write the part label of every input vertex here (.npy, int64)")
    parser.add_argument("--out", help="write the readout with its per-vertex labels here (.json), for "
                                      "`neurok simulate --articulation` (edit it to correct a joint)")
    parser.add_argument("--urdf", help="write a URDF here, its link meshes in <stem>_meshes/ beside it")
    parser.add_argument("--density", type=float, default=1000.0,
                        help="kg/m^3 of closed pieces in the URDF; open pieces: 2 mm shells of it (default 1000)")
    parser.add_argument("--png", help="write a figure of the parts and joint axes here")
    add_model_options(parser)
    add_head_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    import json
    from pathlib import Path

    import numpy as np

    from neurok_ros.articulation.readout import articulate
    from neurok_ros.cli.model_options import load_head_from_args, load_model_from_args
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays
    from neurok_ros.geometry.mesh_io import load_mesh

    if not args.density > 0:
        raise NeurokInputError("--density must be positive")
    V, F = validate_mesh_arrays(*load_mesh(args.mesh))
    model, _ = load_model_from_args(args)
    articulation = articulate(model, V, F, head=load_head_from_args(args, next(model.parameters()).device))
    if args.labels:
        np.save(args.labels, articulation.labels)
    if args.out:
        articulation.save(args.out)
    if args.urdf:
        from neurok_ros.articulation.urdf import write_urdf

        write_urdf(args.urdf, V, F, articulation, density=args.density, name=Path(args.mesh).stem)
    if args.png:
        from neurok_ros.visualisation.articulation_figure import articulation_figure

        articulation_figure(args.png, V, F, articulation, title=Path(args.mesh).name)
    if args.json:
        print(json.dumps(articulation.to_dict()))
        return 0
    print(f"neurok articulate: {args.mesh}: {articulation.kind}, {articulation.num_parts} parts, "
          f"{len(articulation.joints)} joints ({articulation.seconds:.1f} s)")
    for joint in articulation.joints:
        unit = "rad" if joint.type == "revolute" else "mesh units"
        print(f"  {joint.name}: {joint.type} part {joint.parent} -> {joint.child}, axis "
              f"{np.round(joint.axis, 3).tolist()} through {np.round(joint.origin, 4).tolist()}, "
              f"[{joint.lower:.3f}, {joint.upper:.3f}] {unit}, confidence {joint.confidence:.2f}")
    return 0
