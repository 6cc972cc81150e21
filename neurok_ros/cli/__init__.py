"""The `neurok` command line: every capability of the library, no ROS needed.

Each sub-command lives in its own module with `register(subparsers)`, which adds a parser whose
`func(args) -> int` runs it. Heavy imports (torch, mujoco, rclpy) stay inside the functions so that
`neurok --help` is instant.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from neurok_ros.errors import NeurokInputError

COMMAND_MODULES = (
    "neurok_ros.cli.metrics_command",
    "neurok_ros.cli.data_command",
    "neurok_ros.cli.demo_command",
    "neurok_ros.cli.bench_command",
    "neurok_ros.cli.train_command",
    "neurok_ros.cli.ik_command",
    "neurok_ros.cli.fit_command",
    "neurok_ros.cli.sample_command",
    "neurok_ros.cli.articulate_command",
    "neurok_ros.cli.articulation_eval_command",
    "neurok_ros.cli.articulation_train_command",
    "neurok_ros.cli.bank_command",
    "neurok_ros.cli.eval_command",
    "neurok_ros.cli.simulate_command",
    "neurok_ros.cli.soft_eval_command",
    "neurok_ros.cli.serve_command",
    "neurok_ros.cli.request_command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neurok", description="NeuROK: neural object kinematics and latent Lagrangian dynamics.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `neurok` console script; returns the process exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except NeurokInputError as exc:
        print(f"neurok {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"neurok {args.command}: error: no such file: {exc.filename}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"neurok {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
