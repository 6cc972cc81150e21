"""`neurok serve`: run neurok_node (the ROS 2 prediction node) in this process until Ctrl-C.

    neurok serve                                  # defaults of config/neurok.yaml
    neurok serve --params-file my.yaml --param fps:=60.0 --namespace /robot
    neurok serve --ros-args --params-file my.yaml -r __node:=neurok   # raw ROS arguments, last

The same as the `neurok_node` console script (and `ros2 run neurok_ros neurok_node` in a workspace).
"""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser("serve", help="run the ROS 2 node neurok_node (topics: msg/README.md)")
    parser.add_argument("--params-file", action="append", default=[], metavar="YAML",
                        help="ROS 2 params file (repeatable; key 'neurok_node:' or '/**/neurok_node:')")
    parser.add_argument("--param", action="append", default=[], metavar="NAME:=VALUE",
                        help="one parameter, ROS syntax, e.g. duration:=1.0 (repeatable)")
    parser.add_argument("--namespace", help="node namespace, e.g. /robot")
    parser.add_argument("--name", help="node name (default neurok_node)")
    parser.add_argument("--log-level", choices=("debug", "info", "warn", "error", "fatal"))
    parser.add_argument("--ros-args", dest="ros_args", nargs=argparse.REMAINDER, default=[],
                        help="everything after it goes to rclpy as ROS arguments")
    parser.set_defaults(func=run)


def ros_arguments(args) -> list[str]:
    """The rclpy argument list for the options of `neurok serve`."""
    out = ["neurok_serve", "--ros-args"]
    for path in args.params_file:
        out += ["--params-file", path]
    for item in args.param:
        if ":=" not in item:
            from neurok_ros.errors import NeurokInputError

            raise NeurokInputError(f"--param expects NAME:=VALUE, got {item!r}")
        out += ["-p", item]
    if args.namespace:
        out += ["-r", f"__ns:={'/' + args.namespace.strip('/')}"]
    if args.name:
        out += ["-r", f"__node:={args.name}"]
    if args.log_level:
        out += ["--log-level", args.log_level]
    rest = list(args.ros_args)
    if rest and rest[0] == "--ros-args":
        rest = rest[1:]
    return out + rest


def run(args) -> int:
    from neurok_ros.ros.neurok_node import main

    return main(ros_arguments(args))
