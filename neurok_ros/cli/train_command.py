"""`neurok train`: train the conditional VAE on a 4D dataset folder (DDP under torchrun).

Multi-process: torchrun --nproc_per_node N -m neurok_ros train ... (gloo on the CPU, nccl on CUDA).
"""
from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("train", help="train the NeuROK model (progress bar, validation, resume)")
    parser.add_argument("--data", required=True, help="dataset folder (manifest.json + instance .npz files)")
    parser.add_argument("--config", help="run YAML (default: config/model/default.yaml)")
    parser.add_argument("--out", required=True, help="checkpoint path (.pt); a .log.jsonl and a "
                                                     ".train-state.pt are written next to it")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--resume", action="store_true", help="continue from --out (weights, optimizer, step)")
    parser.add_argument("--steps", type=int, help="total optimizer steps (overrides the config)")
    parser.add_argument("--split-file", help="JSON splits (from `neurok data split`) instead of the manifest's")
    parser.add_argument("--workers", type=int, help="DataLoader worker processes (overrides the config)")
    parser.add_argument("--batch-size", type=int, help="pairs per step per process (overrides the config)")
    parser.add_argument("--max-minutes", type=float, help="wall-clock budget; stops and saves when spent, "
                                                          "the learning-rate schedule fitted to it")
    parser.add_argument("--precision", choices=("fp32", "bf16"), help="overrides the config")
    parser.add_argument("--init", help="start from this checkpoint's weights (fresh optimizer and schedule)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config entry, e.g. model.output=displacement (repeatable)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_train)

    plot = subparsers.add_parser("plot-training", help="plot training curves from neurok train logs")
    plot.add_argument("logs", nargs="+", metavar="NAME=LOG[@OFFSET]",
                      help="a label, its <checkpoint>.log.jsonl, and optionally a step offset (second stage)")
    plot.add_argument("--out", required=True, help="PNG path")
    plot.set_defaults(func=run_plot)


def run_plot(args) -> int:
    from pathlib import Path

    from neurok_ros.errors import NeurokInputError
    from neurok_ros.visualisation.training_curves import plot_training_curves

    logs, offsets = {}, {}
    for item in args.logs:
        name, sep, rest = item.partition("=")
        path, _, offset = rest.partition("@")
        if not sep or not Path(path).is_file():
            raise NeurokInputError(f"{item!r}: expected NAME=LOG with an existing log file")
        logs[name], offsets[name] = path, int(offset or 0)
    print(f"wrote {plot_training_curves(logs, args.out, offsets)}")
    return 0


def run_train(args) -> int:
    from neurok_ros.config_files import config_path
    from neurok_ros.training.run_config import load_run_config
    from neurok_ros.training.trainer import train

    for name in ("steps", "batch_size", "max_minutes", "workers"):
        value = getattr(args, name)
        if value is not None and value < (1 if name == "batch_size" else 0):
            from neurok_ros.errors import NeurokInputError
            sign = "positive" if name == "batch_size" else "non-negative"
            raise NeurokInputError(f"--{name.replace('_', '-')} must be {sign}")
    run = load_run_config(args.config or config_path("model/default.yaml"), args.set)
    result = train(args.data, run, args.out, device=args.device, resume=args.resume, steps=args.steps,
                   split_file=args.split_file, workers=args.workers, progress=not args.no_progress, init_from=args.init,
                   batch_size=args.batch_size, max_minutes=args.max_minutes, precision=args.precision)
    import math
    import os
    if int(os.environ.get("RANK", "0")) == 0:
        metrics = ", ".join(f"{k} {v:.5g}" for k, v in result.metrics.items())
        timing = ("no steps left to run" if math.isnan(result.seconds_per_step)  # resumed at or past them
                  else f"{result.seconds_per_step:.3f} s/step")
        print(f"neurok train: step {result.step}, {timing}, checkpoint {result.checkpoint}"
              + (f"; {metrics}" if metrics else ""))
    return 0
