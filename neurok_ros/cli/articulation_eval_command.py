"""`neurok eval-articulation --data DIR`: the articulation readout scored against true parts and joints."""
from __future__ import annotations


def register(subparsers) -> None:
    from neurok_ros.cli.model_options import add_head_options, add_model_options

    parser = subparsers.add_parser("eval-articulation",
                                   help="score `neurok articulate` on a dataset's true parts and joints")
    parser.add_argument("--data", required=True, help="dataset folder (neurok data generate / neurok data real)")
    parser.add_argument("--split", default="test", help="split of manifest.json (default test; 'all': every file)")
    parser.add_argument("--per-category", type=int, default=0, help="at most this many objects per category (0: all)")
    parser.add_argument("--group", choices=("category", "object"), default="category", help="table rows")
    parser.add_argument("--json", help="write every joint's scores here")
    parser.add_argument("--push", action="store_true",
                        help="also push each true moving part along its joint (0.3 m/s, 1 s, no gravity) through "
                             "the readout in joint coordinates and score the motion (docs/physics.md)")
    parser.add_argument("--pose-fit", action="store_true",
                        help="instead, fit each object's rest (frame 0) to two of its poses with `neurok ik`'s "
                             "default path through the readout and score IoU and joint values "
                             "(evaluation/joint_pose_checks.py; for datasets of neurok data real)")
    parser.add_argument("--no-joints", action="store_true",
                        help="with --pose-fit: the learned fit alone (`neurok ik --articulation none`)")
    parser.add_argument("--partial-view", action="store_true",
                        help="with --pose-fit: the fit sees the target from one seeded camera only, as one depth "
                             "image (as `neurok eval --partial-view`)")
    parser.add_argument("--truth", action="store_true",
                        help="use each object's own true parts and joints as the readout: what the push check "
                             "(or --pose-fit) gives a perfect readout")
    add_model_options(parser)
    add_head_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    import json
    from collections import Counter
    from pathlib import Path

    from neurok_ros.articulation.evaluation import evaluate_files, markdown_table
    from neurok_ros.cli.model_options import load_head_from_args, load_model_from_args
    from neurok_ros.errors import NeurokInputError

    folder = Path(args.data)
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise NeurokInputError(f"{folder}: no manifest.json (not a dataset folder)")
    manifest = json.loads(manifest_path.read_text())
    if args.split == "all":
        names = sorted(p.name for p in folder.glob("*.npz"))
    elif args.split in manifest.get("splits", {}):
        names = manifest["splits"][args.split]
    else:
        raise NeurokInputError(f"split {args.split!r} is not in {manifest_path}")
    kinds = {c: v["kind"] for c, v in manifest.get("categories", {}).items()}
    taken, files = Counter(), []
    for name in names:
        category = name.rsplit("_", 1)[0]
        if kinds.get(category, "articulated") != "articulated" or not (folder / name).is_file():
            continue
        if args.per_category and taken[category] >= args.per_category:
            continue
        taken[category] += 1
        files.append(folder / name)
    if not files:
        raise NeurokInputError(f"no articulated instance files of split {args.split!r} in {folder}")
    model, _ = load_model_from_args(args)
    head = load_head_from_args(args, next(model.parameters()).device)
    if args.pose_fit:
        from neurok_ros.evaluation.joint_pose_checks import pose_fit_rows, pose_fit_table

        joints = "truth" if args.truth else "none" if args.no_joints else "readout"
        rows = pose_fit_rows(model, files, head=head, joints=joints, partial_view=args.partial_view)
        table = pose_fit_table(rows)
    else:
        rows = evaluate_files(model, files, head=head, push=args.push, truth=args.truth)
        table = markdown_table(rows, args.group)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    print(table)
    return 0
