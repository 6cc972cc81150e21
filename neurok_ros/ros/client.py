"""A small client of neurok_node for planners and scripts: send a mesh and an action through the
node's topics, wait for the trajectory, get numpy arrays back.

    import rclpy
    from neurok_ros.ros.client import NeurokClient
    rclpy.init()
    with NeurokClient("/neurok_node") as client:
        client.send_mesh_file("mug.ply", frame_id="object")          # waits until encoded
        reply = client.request([[0.05, 0.0, 0.1]], [[0.0, 0.0, -0.5]])
        reply.frames  # (T, N, 3) float32, mesh frame; reply.times (T,); reply.faces (M, 3)
        reply.joints  # with joints: {"names", "times", "positions", "velocities"}; client.description: URDF
        client.send_observation(depth_points)   # (M, 3) the object seen now: later actions start there
        reply = client.predict_action(V, F, [[0.05, 0.0, 0.1]], [[0.0, 0.0, -0.5]], duration=1.0)  # one goal

Requests are matched to replies by stamp: every mesh and action the client sends carries a fresh,
unique header.stamp; the node echoes the action's stamp on its ~/trajectory and names the stamp of
every input it refuses on /diagnostics, which the client raises as NeurokInputError.
predict_action instead sends one PredictMotion goal (~/predict_motion: mesh and contacts together,
neurok_interfaces built) and leaves the node's mesh in use alone.
"""
from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory
from visualization_msgs.msg import Marker

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import NeurokInputError
from neurok_ros.ros.contact_action import conditions_to_trajectory
from neurok_ros.ros.diagnostics import find_status, parse_energy_text, stamp_text, status_values
from neurok_ros.ros.joint_messages import trajectory_arrays
from neurok_ros.ros.mesh_marker import file_to_marker, marker_to_mesh, mesh_to_marker
from neurok_ros.ros.observation_cloud import points_to_cloud
from neurok_ros.ros.qos import (
    ACTION_QOS,
    DESCRIPTION_QOS,
    DIAGNOSTICS_QOS,
    JOINT_TRAJECTORY_QOS,
    MESH_QOS,
    OBSERVATION_QOS,
    TRAJECTORY_MESH_QOS,
    TRAJECTORY_QOS,
)
from neurok_ros.ros.trajectory_cloud import cloud_to_frames

_client_ids = itertools.count()


@dataclass
class TrajectoryReply:
    """frames (T, N, 3) float32 metres and times (T,) float32 s, mesh frame; vertices (N, 3) and
    faces (M, 3): the mesh whose vertices the columns are (the input, or its decimation);
    latency_s: action sent -> trajectory received; diagnostics: the node's state values then;
    energy (T, 3) joules (kinetic, potential, total per frame, from the diagnostics' last_energy_j)
    or None when the node did not report it; joints: for an object simulated in joint coordinates,
    {"names": [J], "times": (T,) s, "positions": (T, J) rad or m, "velocities": (T, J)} from
    ~/joint_trajectory, else None."""

    frames: np.ndarray
    times: np.ndarray
    frame_id: str
    stamp: Time
    vertices: Optional[np.ndarray]
    faces: Optional[np.ndarray]
    latency_s: float
    diagnostics: dict = field(default_factory=dict)
    joints: Optional[dict] = None
    articulation: Optional[object] = None  # predict_action: the neurok_ros.articulation Articulation used

    @property
    def energy(self) -> Optional[np.ndarray]:
        if isinstance(self.diagnostics.get("energy_j"), list):  # predict_action: the goal's summary
            energy = np.asarray(self.diagnostics["energy_j"], dtype=np.float64)
            return energy if energy.shape == (len(self.times), 3) else None
        energy = parse_energy_text(self.diagnostics.get("last_energy_j", ""))
        return energy if energy is not None and len(energy) == len(self.times) else None

    def save(self, path, **extra) -> None:
        """Write an .npz: frames, times, vertices, faces, frame_id, stamp, latency_s, energy (when
        known), joint_names, joint_positions and joint_velocities (objects with joints) and extra arrays."""
        energy = self.energy
        if energy is not None:
            extra = {"energy": energy, **extra}
        if self.joints is not None:
            extra = {"joint_names": np.array(self.joints["names"]), "joint_positions": self.joints["positions"],
                     "joint_velocities": self.joints["velocities"], **extra}
        np.savez_compressed(path, frames=self.frames, times=self.times,
                            vertices=self.vertices if self.vertices is not None else np.zeros((0, 3)),
                            faces=self.faces if self.faces is not None else np.zeros((0, 3), np.int64),
                            frame_id=np.array(self.frame_id), stamp=np.array(stamp_text(self.stamp)),
                            latency_s=np.array(self.latency_s), **extra)


class NeurokClient:
    """Talks to the node named `server` (fully qualified, e.g. "/neurok_node" or "/robot/neurok_node").

    context: an initialised rclpy Context (default: the global one). The client spins its own
    executor while it waits; do not add its node to another executor.
    """

    def __init__(self, server: str = "/neurok_node", *, context=None, node_name: Optional[str] = None):
        self.server = "/" + server.strip("/")
        self.node = Node(node_name or f"neurok_client_{os.getpid()}_{next(_client_ids)}", context=context)
        self._executor = SingleThreadedExecutor(context=context)
        self._executor.add_node(self.node)
        self._mesh_pub = self.node.create_publisher(Marker, f"{self.server}/mesh", MESH_QOS)
        self._action_pub = self.node.create_publisher(MultiDOFJointTrajectory, f"{self.server}/action", ACTION_QOS)
        self._observation_pub = self.node.create_publisher(PointCloud2, f"{self.server}/observation", OBSERVATION_QOS)
        self._clouds: list = []
        self._diagnostics: list = []
        self._trajectory_mesh: Optional[Marker] = None
        self._joint_trajectories: list = []
        self.description: Optional[str] = None  # the URDF of the last mesh's parts and joints
        self.node.create_subscription(PointCloud2, f"{self.server}/trajectory", self._clouds.append, TRAJECTORY_QOS)
        self.node.create_subscription(JointTrajectory, f"{self.server}/joint_trajectory",
                                      self._joint_trajectories.append, JOINT_TRAJECTORY_QOS)
        self.node.create_subscription(String, f"{self.server}/object_description", self._on_description,
                                      DESCRIPTION_QOS)
        self.node.create_subscription(Marker, f"{self.server}/trajectory_mesh", self._on_trajectory_mesh,
                                      TRAJECTORY_MESH_QOS)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, DIAGNOSTICS_QOS)
        self._state_name = f"{self.server}: state"
        self._input_name = f"{self.server}: input"
        self._last_stamp_ns = 0
        self.frame_id = "object"
        self._action_client = None  # predict_action's, made on first use

    # ------------------------------------------------------------------ plumbing
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self._action_client is not None:
            self._action_client.destroy()
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()

    def _on_trajectory_mesh(self, msg: Marker) -> None:
        self._trajectory_mesh = msg

    def _on_description(self, msg: String) -> None:
        self.description = msg.data

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        if find_status(msg, self._state_name) is not None:
            self._diagnostics.append(msg)
            del self._diagnostics[:-50]

    def _spin_until(self, done, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while True:
            result = done()
            if result is not None:
                return result
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {what} from {self.server} within {timeout:.0f} s")
            self._executor.spin_once(timeout_sec=0.05)

    def _fresh_stamp(self) -> Time:
        ns = max(self.node.get_clock().now().nanoseconds, self._last_stamp_ns + 1)
        self._last_stamp_ns = ns
        return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def _rejection(self, topic: str, stamp: str) -> Optional[str]:
        for array in reversed(self._diagnostics):
            status = find_status(array, self._input_name)
            if status is None or status.level != DiagnosticStatus.ERROR:
                continue
            values = status_values(status)
            if values.get("topic") == topic and values.get("input_stamp") == stamp:
                return values.get("reason") or status.message
        return None

    def state(self) -> dict:
        """The node's latest state values (empty before any diagnostics arrived)."""
        for array in reversed(self._diagnostics):
            status = find_status(array, self._state_name)
            if status is not None:
                return {**status_values(status), "level": ord(status.level), "message": status.message}
        return {}

    # ------------------------------------------------------------------ API
    def wait_for_server(self, timeout: float = 60.0) -> dict:
        """Wait until the node is matched on ~/mesh and ~/action and reports ready or busy."""
        def ready():
            if self._mesh_pub.get_subscription_count() == 0 or self._action_pub.get_subscription_count() == 0:
                return None
            state = self.state()
            return state if state.get("state") in ("ready", "busy") else None
        return self._spin_until(ready, timeout, "ready state (is neurok_node running?)")

    def send_mesh(self, vertices, faces, frame_id: str = "object", timeout: float = 120.0) -> dict:
        """Publish a mesh (embedded PLY) and wait until the node has encoded it; returns the node's
        state values; NeurokInputError with the node's reason when it refuses the mesh."""
        marker = mesh_to_marker(vertices, faces, frame_id)
        return self.send_mesh_marker(marker, timeout)

    def send_mesh_file(self, path, frame_id: str = "object", timeout: float = 120.0) -> dict:
        """Like send_mesh, with the file's bytes embedded as they are (ply, obj, stl, glb, off)."""
        return self.send_mesh_marker(file_to_marker(path, frame_id), timeout)

    def send_mesh_marker(self, marker: Marker, timeout: float = 120.0) -> dict:
        self.wait_for_server(timeout)
        marker.header.stamp = self._fresh_stamp()
        stamp = stamp_text(marker.header.stamp)
        self.frame_id = marker.header.frame_id or self.frame_id
        self._mesh_pub.publish(marker)

        def outcome():
            reason = self._rejection("~/mesh", stamp)
            if reason is not None:
                raise NeurokInputError(f"{self.server} refused the mesh: {reason}")
            state = self.state()
            return state if state.get("mesh_stamp") == stamp else None
        return self._spin_until(outcome, timeout, "answer to the mesh")

    def _accepted(self, topic: str, stamp: str) -> Optional[dict]:
        for array in reversed(self._diagnostics):
            status = find_status(array, self._input_name)
            if status is not None and status.level != DiagnosticStatus.ERROR:
                values = status_values(status)
                if values.get("topic") == topic and values.get("input_stamp") == stamp:
                    return {**self.state(), "message": status.message}
        return None

    def send_observation(self, points, frame_id: Optional[str] = None, timeout: float = 120.0) -> dict:
        """Publish observed points of the object (M, 3) m, mesh frame (a depth camera's view) and
        wait until the node has fitted them: the fitted shape is the state later actions start
        from. Returns the node's state values (observation_moved, observation_residual_*_m, ...);
        NeurokInputError with the node's reason when it refuses the cloud."""
        stamp_msg = self._fresh_stamp()
        msg = points_to_cloud(points, frame_id or self.frame_id, stamp_msg)
        stamp = stamp_text(stamp_msg)
        self._spin_until(lambda: True if self._observation_pub.get_subscription_count() else None, timeout,
                         "subscriber on ~/observation")
        self._observation_pub.publish(msg)

        def outcome():
            reason = self._rejection("~/observation", stamp)
            if reason is not None:
                raise NeurokInputError(f"{self.server} refused the observation: {reason}")
            return self._accepted("~/observation", stamp)
        return self._spin_until(outcome, timeout, "answer to the observation")

    def request(self, positions, velocities, path_times=(), path_positions=None, *,
                frame_id: Optional[str] = None, timeout: float = 120.0) -> TrajectoryReply:
        """Send one action (contact positions (C, 3) m, initial velocities (C, 3) m/s, optional drag
        path) and wait for its trajectory."""
        positions = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
        path_times = np.asarray(path_times, dtype=np.float64).reshape(-1)
        if path_positions is None:
            path_positions = np.zeros((0, positions.shape[0], 3))
        conditions = ContactConditions(positions, np.asarray(velocities, dtype=np.float64).reshape(-1, 3),
                                       path_times, path_positions)
        return self.request_conditions(conditions, frame_id=frame_id, timeout=timeout)

    def request_conditions(self, conditions: ContactConditions, *, frame_id: Optional[str] = None,
                           timeout: float = 120.0) -> TrajectoryReply:
        stamp_msg = self._fresh_stamp()
        msg = conditions_to_trajectory(conditions, frame_id or self.frame_id, stamp_msg)
        stamp = stamp_text(stamp_msg)
        self._spin_until(lambda: True if self._action_pub.get_subscription_count() else None, timeout,
                         "subscriber on ~/action")
        sent = time.perf_counter()
        self._action_pub.publish(msg)

        def outcome():
            reason = self._rejection("~/action", stamp)
            if reason is not None:
                raise NeurokInputError(f"{self.server} refused the action: {reason}")
            for cloud in self._clouds:
                if stamp_text(cloud.header.stamp) == stamp:
                    return cloud
            return None
        cloud = self._spin_until(outcome, timeout, "trajectory for the action")
        latency = time.perf_counter() - sent
        self._clouds.clear()
        frames, times = cloud_to_frames(cloud)
        vertices = faces = None
        if self._trajectory_mesh is not None:
            mesh = marker_to_mesh(self._trajectory_mesh)
            if len(mesh.vertices) == frames.shape[1]:
                vertices, faces = mesh.vertices, mesh.faces
        # The node publishes its joint trajectory and diagnostics right after the trajectory; give them a moment.
        deadline = time.monotonic() + 1.0
        while self.state().get("last_stamp") != stamp and time.monotonic() < deadline:
            self._executor.spin_once(timeout_sec=0.05)
        state = self.state()
        joints = None
        if state.get("sim_chart") == "joints":
            message = self._spin_until(lambda: next((m for m in self._joint_trajectories
                                                     if stamp_text(m.header.stamp) == stamp), None), 5.0,
                                       "joint trajectory for the action")
            names, joint_times, positions, velocities = trajectory_arrays(message)
            joints = {"names": names, "times": joint_times, "positions": positions, "velocities": velocities}
        self._joint_trajectories.clear()
        return TrajectoryReply(frames, times, cloud.header.frame_id, cloud.header.stamp, vertices, faces, latency,
                               state, joints)

    def predict_action(self, vertices, faces, positions, velocities, path_times=(), path_positions=None, *,
                       frame_id: Optional[str] = None, duration: float = 0.0, fps: float = 0.0,
                       gravity=None, free_base: Optional[bool] = None, feedback=None,
                       timeout: float = 300.0) -> TrajectoryReply:
        """One PredictMotion goal on ~/predict_motion: the mesh (vertices (n, 3) m, faces; embedded PLY)
        and the contacts (as request) in one exchange, the node's mesh in use left alone. duration,
        fps (0: the node's), gravity ((3,) m/s^2, None: the node's) and free_base (None: the node's)
        override the node's parameters for this goal only; feedback(progress, stage) is called as
        feedback arrives. The reply's diagnostics are the goal's summary_json; articulation is the
        one the prediction used. NeurokInputError when the node aborts the goal (with its reason) or
        rejects it; TimeoutError (the goal canceled) after `timeout` s."""
        from rclpy.action import ActionClient

        from neurok_interfaces.action import PredictMotion
        from neurok_ros.ros.articulation_message import message_to_articulation

        positions = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
        if path_positions is None:
            path_positions = np.zeros((0, positions.shape[0], 3))
        conditions = ContactConditions(positions, np.asarray(velocities, dtype=np.float64).reshape(-1, 3),
                                       np.asarray(path_times, dtype=np.float64).reshape(-1), path_positions)
        frame = frame_id or self.frame_id
        stamp = self._fresh_stamp()
        mesh = mesh_to_marker(vertices, faces, frame)
        mesh.header.stamp = stamp
        free = {None: PredictMotion.Goal.FREE_BASE_DEFAULT, False: PredictMotion.Goal.FREE_BASE_OFF,
                True: PredictMotion.Goal.FREE_BASE_ON}[free_base]
        goal = PredictMotion.Goal(mesh=mesh, contacts=conditions_to_trajectory(conditions, frame, stamp),
                                  duration=float(duration), fps=float(fps), free_base=free,
                                  gravity=[] if gravity is None else [float(g) for g in gravity])
        if self._action_client is None:
            self._action_client = ActionClient(self.node, PredictMotion, f"{self.server}/predict_motion")
        client = self._action_client
        self._spin_until(lambda: True if client.server_is_ready() else None, timeout, "PredictMotion server")
        sent = time.perf_counter()
        on_feedback = None if feedback is None else (lambda m: feedback(m.feedback.progress, m.feedback.stage))
        accepted = client.send_goal_async(goal, feedback_callback=on_feedback)
        handle = self._spin_until(lambda: accepted.result() if accepted.done() else None, timeout, "goal response")
        if not handle.accepted:
            raise NeurokInputError(f"{self.server} rejected the PredictMotion goal (a setting out of range)")
        result = handle.get_result_async()
        try:
            response = self._spin_until(lambda: result.result() if result.done() else None,
                                        max(timeout - (time.perf_counter() - sent), 0.0), "PredictMotion result")
        except TimeoutError:
            handle.cancel_goal_async()
            self._executor.spin_once(timeout_sec=0.1)
            raise
        summary = json.loads(response.result.summary_json or "{}")
        if response.status != GoalStatus.STATUS_SUCCEEDED:
            raise NeurokInputError(f"{self.server} did not finish the PredictMotion goal (status {response.status}): "
                                   f"{summary.get('error') or summary.get('canceled') or 'no reason given'}")
        frames, times = cloud_to_frames(response.result.trajectory)
        joints = None
        if len(response.result.joint_trajectory.joint_names):
            names, joint_times, q, qdot = trajectory_arrays(response.result.joint_trajectory)
            joints = {"names": names, "times": joint_times, "positions": q, "velocities": qdot}
        articulation = (message_to_articulation(response.result.articulation)
                        if len(response.result.articulation.vertex_parts) else None)
        reply_mesh = marker_to_mesh(mesh)  # the columns' mesh, as the node read it (PLY: float32)
        if len(reply_mesh.vertices) != frames.shape[1]:  # the node decimated it
            reply_mesh = None
        return TrajectoryReply(frames, times, response.result.trajectory.header.frame_id,
                               response.result.trajectory.header.stamp,
                               None if reply_mesh is None else reply_mesh.vertices,
                               None if reply_mesh is None else reply_mesh.faces,
                               time.perf_counter() - sent, summary, joints, articulation)
