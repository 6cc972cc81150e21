"""Send messages through real ROS 2 topics inside one process: a publisher node and a subscriber
node on one executor. Used by the demo (and the tests) to prove what arrives is what was sent."""
from __future__ import annotations

import itertools
import os
import time

import numpy as np

_topic_counter = itertools.count()


def unique_topic(base: str) -> str:
    """A topic name that no other loopback in this or another process uses."""
    return f"/neurok_loopback_{os.getpid()}_{next(_topic_counter)}/{base}"


def spin_until(executor, done, timeout_s: float, what: str) -> None:
    """spin_once until done() is true; TimeoutError naming `what` after timeout_s seconds."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.1f} s waiting for {what}")
        executor.spin_once(timeout_sec=0.05)


def publish_and_receive(msg_type, msg, qos, *, timeout_s: float = 10.0, late_subscriber: bool = False,
                        context=None):
    """Publish `msg` from one node and return what a second node receives on the same topic.

    late_subscriber: publish first, then create the subscription (needs TRANSIENT_LOCAL).
    context: an initialised rclpy Context (default: the global one).
    """
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    topic = unique_topic(msg_type.__name__.lower())
    pub_node = Node(f"neurok_loopback_pub_{os.getpid()}", context=context)
    sub_node = Node(f"neurok_loopback_sub_{os.getpid()}", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(pub_node)
    executor.add_node(sub_node)
    received = []
    try:
        publisher = pub_node.create_publisher(msg_type, topic, qos)
        if late_subscriber:
            publisher.publish(msg)
        sub_node.create_subscription(msg_type, topic, received.append, qos)
        spin_until(executor, lambda: publisher.get_subscription_count() > 0, timeout_s,
                   f"the subscriber of {topic} to match")
        if not late_subscriber:
            publisher.publish(msg)
        spin_until(executor, lambda: bool(received), timeout_s, f"a {msg_type.__name__} on {topic}")
    finally:
        executor.shutdown(timeout_sec=1.0)
        pub_node.destroy_node()
        sub_node.destroy_node()
    return received[0]


def send_through_topics(vertices: np.ndarray, faces: np.ndarray, frames: np.ndarray, times: np.ndarray,
                        frame_id: str = "object", timeout_s: float = 20.0) -> dict:
    """Send a mesh as a MESH_RESOURCE Marker and its motion as an organised PointCloud2 through real
    topics in a private rclpy context; return what arrived:
    {"vertices" (n, 3), "faces" (m, 3), "frames" (T, n, 3) float32, "times" (T,), "seconds"}."""
    import rclpy
    from sensor_msgs.msg import PointCloud2
    from visualization_msgs.msg import Marker

    from neurok_ros.ros.mesh_marker import marker_to_mesh, mesh_to_marker
    from neurok_ros.ros.qos import MESH_QOS, TRAJECTORY_QOS
    from neurok_ros.ros.trajectory_cloud import cloud_to_frames, frames_to_cloud

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    start = time.perf_counter()
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        from builtin_interfaces.msg import Time

        marker = publish_and_receive(Marker, mesh_to_marker(vertices, faces, frame_id), MESH_QOS,
                                     timeout_s=timeout_s, context=context)
        cloud = publish_and_receive(PointCloud2, frames_to_cloud(frames, times, frame_id, Time()),
                                    TRAJECTORY_QOS, timeout_s=timeout_s, context=context)
    finally:
        rclpy.shutdown(context=context)
    mesh = marker_to_mesh(marker)
    got_frames, got_times = cloud_to_frames(cloud)
    return {"vertices": mesh.vertices, "faces": mesh.faces, "frames": got_frames, "times": got_times,
            "seconds": time.perf_counter() - start}
