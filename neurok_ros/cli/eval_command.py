"""`neurok eval --data TEST_DIR --out docs/eval.md`: the paper's Table 1 protocol on a dataset split.

NeuROK, its ablations (no active subspace; displacement output and no augmentation from their own
checkpoints) and the identity and PCA baselines fit TARGET poses from surface samples; see
neurok_ros/evaluation/runner.py and the Protocol section of the report it writes.
"""
from __future__ import annotations

import argparse
import shlex


def register(subparsers) -> None:
    from neurok_ros.cli.fit_options import add_fit_options

    parser = subparsers.add_parser(
        "eval", help="pose-fitting table (NeuROK, ablations, baselines) on a test split",
        description="Evaluate pose fitting on a dataset split like the NeuROK paper's Table 1 and write a "
                    "markdown report: NeuROK, ablations and baselines, Chamfer-L1/L2 and IoU in SOURCE's "
                    "normalised frame.")
    parser.add_argument("--data", required=True, help="dataset folder (manifest.json + instance .npz files)")
    parser.add_argument("--out", required=True, help="markdown report to write, e.g. docs/eval.md")
    parser.add_argument("--split", default="test", help="split to evaluate (default: test)")
    parser.add_argument("--split-file", help="JSON splits (from `neurok data split`) instead of the manifest's; "
                                             "its train split also feeds the PCA baseline")
    parser.add_argument("--pairs-per-category", type=_positive_int, metavar="N",
                        help="instances (one pose pair each) per category (default: all)")
    parser.add_argument("--checkpoint", help="NeuROK checkpoint (default: the shipped one)")
    parser.add_argument("--ablation-checkpoints", nargs="+", default=[], metavar="KEY=PATH",
                        help="displacement=PATH and/or no_augment=PATH; rows without one are skipped")
    parser.add_argument("--seed", type=int, default=0, help="pair, sample and IK seed (default: 0)")
    parser.add_argument("--random-heading", action="store_true",
                        help="turn each pair (SOURCE and TARGET alike) about the up axis by a seeded random "
                             "angle: objects scanned at an unknown heading")
    parser.add_argument("--partial-view", action="store_true",
                        help="the methods see only TARGET's samples visible from one seeded camera (one depth "
                             "image) and fit the one-sided Chamfer from them")
    parser.add_argument("--skip-rows", nargs="+", default=[], metavar="ROW",
                        help="leave these rows out: no_subspace, unanchored, displacement, no_augment, identity, "
                             "pca (NeuROK stays: the others are compared with it)")
    parser.add_argument("--json", metavar="FILE", help="also write every per-pair record as JSON (while the run "
                                                       "goes on, the records so far are in FILE.partial)")
    parser.add_argument("--reuse-records", nargs="+", default=[], metavar="FILE",
                        help="--json files of earlier runs with this protocol (split, seed, samples, IK, fits, "
                             "PCA, heading, view, as each file stores them): their records are taken instead of "
                             "fitted again; each row's first reused pair is fitted again and must reproduce its "
                             "record")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="model device (metrics run on the CPU)")
    parser.add_argument("--metric-samples", type=_positive_int, default=100_000, metavar="N",
                        help="surface samples per shape and IoU points (default: 100000)")
    parser.add_argument("--target-samples", type=_positive_int, default=2048, metavar="N",
                        help="TARGET surface samples the methods see (default: 2048)")
    add_fit_options(parser)
    parser.add_argument("--fits", type=_positive_int, default=1, metavar="K",
                        help="every NeuROK-type row predicts the vertex mean of K fits, each from its own encoding "
                             "samples and IK starts (default: 1, the single fit)")
    parser.add_argument("--pca-pairs", type=_positive_int, default=2048, metavar="N",
                        help="training pairs of the PCA baseline (default: 2048)")
    parser.add_argument("--pca-components", type=_positive_int, default=16, metavar="D",
                        help="PCA components (default: 16)")
    parser.add_argument("--pca-cache", metavar="DIR",
                        help="folder for the PCA subspace cache (default: <tmp>/neurok_eval_cache)")
    parser.add_argument("--no-pca-cache", action="store_true", help="always rebuild the PCA subspace")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_eval)


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_ablations(items: list[str]) -> dict[str, str]:
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.evaluation.runner import ABLATIONS

    out = {}
    for item in items:
        key, sep, path = item.partition("=")
        if not sep or not path or key not in ABLATIONS:
            raise NeurokInputError(f"--ablation-checkpoints {item!r}: expected KEY=PATH with KEY one of "
                                   f"{', '.join(ABLATIONS)}")
        out[key] = path
    return out


def command_line(args) -> str:
    """The invocation, rebuilt from the parsed arguments (options left at their defaults omitted)."""
    from neurok_ros.cli.fit_options import fit_option_words

    words = ["neurok", "eval", "--data", args.data, "--out", args.out]
    if args.split != "test":
        words += ["--split", args.split]
    for name in ("split_file", "pairs_per_category", "checkpoint", "json", "pca_cache"):
        if getattr(args, name) is not None:
            words += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    if args.ablation_checkpoints:
        words += ["--ablation-checkpoints", *args.ablation_checkpoints]
    for name, default in (("seed", 0), ("device", "auto"), ("metric_samples", 100_000), ("target_samples", 2048),
                          ("pca_pairs", 2048), ("pca_components", 16), ("fits", 1)):
        if getattr(args, name) != default:
            words += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    words += fit_option_words(args)
    if args.no_pca_cache:
        words.append("--no-pca-cache")
    if args.random_heading:
        words.append("--random-heading")
    if args.partial_view:
        words.append("--partial-view")
    if args.skip_rows:
        words += ["--skip-rows", *args.skip_rows]
    if args.reuse_records:
        words += ["--reuse-records", *args.reuse_records]
    return shlex.join(words)


def config_from_args(args, device: str):
    """The EvalConfig of parsed `neurok eval` arguments on `device` (records to reuse not loaded)."""
    from neurok_ros.cli.fit_options import fit_config
    from neurok_ros.evaluation.pca_baseline import PCAConfig
    from neurok_ros.evaluation.runner import DEFAULT_PCA_CACHE, EvalConfig
    from neurok_ros.kinematics.ik_config import IKConfig

    ik = fit_config(args, IKConfig())
    cache = None if args.no_pca_cache else (args.pca_cache or DEFAULT_PCA_CACHE)
    return EvalConfig(data=args.data, split=args.split, split_file=args.split_file,
                      pairs_per_category=args.pairs_per_category, checkpoint=args.checkpoint,
                      ablations=parse_ablations(args.ablation_checkpoints), seed=args.seed,
                      device=device, metric_samples=args.metric_samples,
                      target_samples=args.target_samples, ik=ik, fits=args.fits,
                      pca=PCAConfig(num_pairs=args.pca_pairs, components=args.pca_components),
                      pca_cache=cache, random_heading=args.random_heading,
                      partial_view=args.partial_view, skip_rows=tuple(args.skip_rows),
                      progress=not args.no_progress,
                      command=command_line(args))


def load_reuse(paths: list[str], config):
    """config with the records of the --json files `paths` to reuse: each file's run must have config's
    protocol (record_reuse.PROTOCOL_FIELDS, as stored_protocol reads it)."""
    import json
    from dataclasses import replace
    from pathlib import Path

    from neurok_ros.errors import NeurokInputError
    from neurok_ros.evaluation.record_reuse import index_records, protocol_differences, protocol_of

    current = protocol_of(config)
    sources, names = [], []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
            command, records = data["command"], data["records"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise NeurokInputError(f"--reuse-records {path}: not a `neurok eval --json` file ({exc})") from exc
        differences = protocol_differences(stored_protocol(data, config.device, path), current)
        if differences:
            raise NeurokInputError(f"--reuse-records {path}: that run differs from this one in "
                                   f"{', '.join(differences)}")
        sources.append((path, records))
        names.append(f"`{path}` (`{command}`)")
    return replace(config, reuse=index_records(sources), reuse_sources=tuple(names))


def stored_protocol(data: dict, device: str, path: str) -> dict:
    """The protocol (record_reuse.protocol_of) of an earlier run's --json file `data`: its "config", the
    resolved settings it stores; a file from before those were stored has its command parsed again,
    with the IK settings stored_ik gives."""
    from dataclasses import asdict, replace

    from neurok_ros.errors import NeurokInputError
    from neurok_ros.evaluation.record_reuse import protocol_of

    if "config" in data:
        stored = data["config"]
        if not isinstance(stored, dict) or "ik" not in stored:
            raise NeurokInputError(f"--reuse-records {path}: its \"config\" is not an eval protocol")
        return {**stored, "ik": asdict(stored_ik(stored, None, path))}
    parser = argparse.ArgumentParser(prog="neurok", exit_on_error=False)
    register(parser.add_subparsers())
    try:
        words = shlex.split(data["command"])
    except (ValueError, TypeError) as exc:
        raise NeurokInputError(f"--reuse-records {path}: not a `neurok eval --json` file ({exc})") from exc
    if words[:2] != ["neurok", "eval"]:
        raise NeurokInputError(f"--reuse-records {path}: its command is not a `neurok eval` run")
    try:
        earlier = config_from_args(parser.parse_args(words[1:]), device)
    except (argparse.ArgumentError, SystemExit) as exc:
        raise NeurokInputError(f"--reuse-records {path}: its command does not parse ({exc})") from exc
    return protocol_of(replace(earlier, ik=stored_ik(data, earlier.ik, path)))


# IKConfig.z_steps before --json files stored their IK settings. A --json file without "ik" is of
# that time; where its command names no z steps, its fits took this many steps in z.
Z_STEPS_BEFORE_STORED_IK = 40
# IKConfig fields added since "ik" was first stored, with the values that give the fit of before
# (a stored "ik" without them was fitted so).
IK_FIELDS_BEFORE = {"rigid_pieces": False, "rigidity_weight": 0.0, "piece_steps": 0, "piece_tolerance": 0.01,
                    "piece_links": False, "piece_link_tolerance": 0.01, "q_keep": 0, "q_prune_after": 10}


def stored_ik(data: dict, parsed, path: str):
    """The IK settings of an earlier run's --json file `data` (or of its "config"): its stored "ik"
    (IKConfig fields), else those `parsed` from its command with the z steps the default had then
    (Z_STEPS_BEFORE_STORED_IK, unless the command set them)."""
    from dataclasses import fields, replace

    from neurok_ros.errors import NeurokInputError
    from neurok_ros.kinematics.ik_config import IKConfig

    if "ik" not in data:
        words = shlex.split(data["command"])
        parsed = replace(parsed, **IK_FIELDS_BEFORE)
        named = {"--ik-steps", "--z-steps"} & set(words)
        return parsed if named else replace(parsed, z_steps=Z_STEPS_BEFORE_STORED_IK)
    known = {f.name for f in fields(IKConfig)}
    stored = data["ik"]
    if isinstance(stored, dict) and set(stored) < known and known - set(stored) <= set(IK_FIELDS_BEFORE):
        stored = {**{name: IK_FIELDS_BEFORE[name] for name in known - set(stored)}, **stored}
    if not isinstance(stored, dict) or set(stored) != known:
        raise NeurokInputError(f"--reuse-records {path}: its \"ik\" settings are not this version's IKConfig "
                               f"fields")
    try:
        return IKConfig(**stored)
    except ValueError as exc:  # the field names match, so only IKConfig's own checks can fail
        raise NeurokInputError(f"--reuse-records {path}: its \"ik\" settings do not parse ({exc})") from exc


def run_eval(args) -> int:
    import json
    from pathlib import Path

    from neurok_ros.evaluation.record_reuse import protocol_of
    from neurok_ros.evaluation.runner import run_evaluation
    from neurok_ros.kinematics.instance import resolve_device

    config = config_from_args(args, str(resolve_device(args.device)))
    if args.reuse_records:
        config = load_reuse(args.reuse_records, config)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    path = Path(args.json) if args.json else None
    partial = Path(f"{args.json}.partial") if args.json else None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)

    protocol = protocol_of(config)  # stored resolved: a later default does not change what these records mean

    def save_records(records):
        # the records so far, in FILE.partial after every pair (FILE itself, perhaps a run being reused,
        # is written only at the end): a stopped run goes on with --reuse-records FILE.partial
        if partial is not None:
            partial.write_text(json.dumps({"command": config.command, "config": protocol, "partial": True,
                                           "records": records}, indent=1))

    result = run_evaluation(config, save_records)
    out.write_text(result.markdown)
    if path is not None:
        path.write_text(json.dumps({"command": config.command, "config": protocol, **result.to_json()}, indent=1))
        partial.unlink(missing_ok=True)
    print(f"neurok eval: {len({r['file'] for r in result.records})} pairs, {result.seconds:.0f} s; wrote {out}"
          + (f" and {args.json}" if args.json else ""))
    for key, s in result.summary.items():
        iou = "n/a" if s["iou"] is None else f"{s['iou']:.3f}"
        l1 = "n/a" if s["chamfer_l1"] is None else f"{s['chamfer_l1']:.4f}"
        print(f"  {key:<13} Chamfer-L1 {l1}  IoU {iou} ({s['iou_count']})")
    return 0
