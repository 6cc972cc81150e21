"""Run neurok_node inside the calling process and talk to it, or to a running node, with NeurokClient.

    with connected_client(spawn_node=True) as client:     # node + client, one rclpy context
        client.send_mesh_file("mesh.ply")
        reply = client.request(contacts, velocities)

Used by `neurok request --spawn-node`, `make demo` and the node benchmark.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator, Sequence


def parameter_overrides(items: Sequence[str]) -> list:
    """["name:=value", ...] (value parsed as YAML) -> rclpy Parameters; NeurokInputError when malformed."""
    import yaml
    from rclpy.parameter import Parameter

    from neurok_ros.errors import NeurokInputError

    out = []
    for item in items:
        if ":=" not in item:
            raise NeurokInputError(f"--param expects NAME:=VALUE, got {item!r}")
        name, text = item.split(":=", 1)
        out.append(Parameter(name.strip(), value=yaml.safe_load(text)))
    return out


@contextmanager
def connected_client(spawn_node: bool, server: str = "/neurok_node", params_files: Sequence[str] = (),
                     parameters: Sequence[str] = (), timeout: float = 300.0) -> Iterator:
    """A NeurokClient connected to a ready node: with spawn_node, a neurok_node started here (params
    files and "name:=value" overrides), spun on a thread and shut down on exit; otherwise `server`."""
    import rclpy

    from neurok_ros.ros.client import NeurokClient

    context = rclpy.Context()
    rclpy.init(context=context, args=["neurok_client"])
    node = executor = None
    try:
        if spawn_node:
            from neurok_ros.ros.neurok_node import NeurokNode, node_executor

            cli_args = ["--ros-args"] + [a for path in params_files for a in ("--params-file", path)]
            node = NeurokNode(context=context, cli_args=cli_args if params_files else None,
                              parameter_overrides=parameter_overrides(parameters))
            server = node.get_fully_qualified_name()
            executor = node_executor(context)  # multi-threaded: PredictMotion goals leave threads free
            executor.add_node(node)
            threading.Thread(target=executor.spin, name="neurok_node_spin", daemon=True).start()
        with NeurokClient(server, context=context) as client:
            client.wait_for_server(timeout)
            yield client
    finally:
        if node is not None:
            node.stop_goals()  # a PredictMotion goal holds an executor thread, which shutdown() waits for
        if executor is not None:
            executor.shutdown(timeout_sec=2.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def request_trajectory(mesh_path: str, contacts, velocities, *, spawn_node: bool, server: str = "/neurok_node",
                       params_files: Sequence[str] = (), parameters: Sequence[str] = (), frame_id: str = "object",
                       scan=None, timeout: float = 300.0):
    """Send a mesh file, then (given scan: observed points (M, 3) m, mesh frame) an observation of
    the object's current state, then one push (contacts (C, 3) m, velocities (C, 3) m/s) through ROS
    2 topics, and wait for the trajectory. Returns (TrajectoryReply, the node's state after the mesh,
    its state after the observation or None)."""
    if spawn_node:
        print("neurok: starting neurok_node in this process (loading the model)", flush=True)
    with connected_client(spawn_node, server, params_files, parameters, timeout) as client:
        mesh_state = client.send_mesh_file(mesh_path, frame_id=frame_id, timeout=timeout)
        observed = None if scan is None else client.send_observation(scan, timeout=timeout)
        reply = client.request(contacts, velocities, timeout=timeout)
    return reply, mesh_state, observed
