"""neurok_node with real rclpy nodes in one executor: mesh + action in, trajectory, markers and
diagnostics out; the encoding cache; every kind of bad input; latest-only under a burst.

The node runs the real model and simulation (short: 0.2 s at 10 fps, 32 simulation points) on a
small mesh; each test module run uses its own DDS domain (conftest) and each node its own namespace.
"""
import array
import itertools
import json
import os
import time

import numpy as np
import pytest
import torch
import trimesh
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point, PointStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState, PointCloud2
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import NeurokInputError
from neurok_ros.ros.contact_action import conditions_to_trajectory
from neurok_ros.ros.diagnostics import find_status, stamp_text, status_values
from neurok_ros.ros.joint_messages import trajectory_arrays
from neurok_ros.ros.mesh_marker import marker_to_mesh, mesh_to_marker, triangle_list_marker
from neurok_ros.ros.neurok_node import NeurokNode
from neurok_ros.ros.node_parameters import SPECS, default_values, settings_fields
from neurok_ros.ros.prediction_backend import MotionResult, frame_times
from neurok_ros.ros.prediction_worker import EncodingCache, LatestOnlyWorker, mesh_key
from neurok_ros.ros.qos import (
    ACTION_QOS,
    CLICKED_POINT_QOS,
    DESCRIPTION_QOS,
    DIAGNOSTICS_QOS,
    JOINT_STATES_QOS,
    JOINT_TRAJECTORY_QOS,
    MARKERS_QOS,
    MESH_QOS,
    TRAJECTORY_MESH_QOS,
    TRAJECTORY_QOS,
)
from neurok_ros.ros.trajectory_cloud import cloud_to_frames

pytestmark = [pytest.mark.ros, pytest.mark.model, pytest.mark.slow]

torch.set_num_threads(1)
EXAMPLE_MESH = os.path.join(os.path.dirname(__file__), "..", "neurok_ros", "assets", "example_laptop.ply")
FAST = {"duration": 0.2, "fps": 10.0, "simulation_points": 64, "warmup": False, "playback_rate": 4.0,
        "diagnostics_period": 0.5, "contact_tolerance": 0.02}
_namespaces = itertools.count()
_stamps = itertools.count(1)


def _stamp() -> Time:
    return Time(sec=1000 + next(_stamps), nanosec=123)


def _small_mesh():
    """The bundled example laptop (482 vertices, metres, z up), its vertex order scrambled so the
    test can tell input order from any internal order."""
    from neurok_ros.geometry.mesh_io import load_mesh

    V, F = load_mesh(EXAMPLE_MESH)
    order = np.random.default_rng(0).permutation(len(V))
    inverse = np.argsort(order)
    return V[order], inverse[F]


class FakeBackend:
    """Encodes instantly; predicts a rigid translation along the first contact velocity."""

    info = {"checkpoint": "fake"}

    def __init__(self, delay: float = 0.0):
        self.delay = delay
        self.encoded = 0
        self.predicted = []

    def encode(self, V, F):
        time.sleep(0.01)
        self.encoded += 1
        return {"V": np.asarray(V)}

    def predict(self, instance, conditions, settings):
        time.sleep(self.delay)
        self.predicted.append(conditions)
        t = frame_times(settings.duration, settings.fps)
        frames = instance["V"][None] + t[:, None, None] * conditions.velocities[0][None, None]
        return MotionResult(frames.astype(np.float32), t.astype(np.float32), timings={"solve_s": self.delay})

    def warm_up(self, settings):
        return 0.0


@pytest.fixture(scope="module")
def backend(ros_context):
    """The real model (NEUROK_TEST_FAKE_BACKEND=1: a fake one, to debug the ROS plumbing alone)."""
    from neurok_ros.ros.prediction_backend import NeurokBackend

    if os.environ.get("NEUROK_TEST_FAKE_BACKEND"):
        return FakeBackend(delay=0.1)

    return NeurokBackend.load("", "cpu")


def spin_until(executor, done, timeout: float, what: str):
    """Spin `executor` until done() is truthy (returned), or fail naming `what` after timeout s."""
    deadline = time.monotonic() + timeout
    while not (result := done()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        executor.spin_once(timeout_sec=0.02)
    return result


class ProbedNode:
    """A node under test and a probe node in one SingleThreadedExecutor (subclasses create them):
    spinning, waiting and closing."""

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.probe.destroy_node()

    def spin_until(self, done, timeout, what):
        return spin_until(self.executor, done, timeout, what)

    def spin_for(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)


class Harness(ProbedNode):
    """The node under test and a probe node (publishers to its inputs, subscribers to its outputs)
    in one SingleThreadedExecutor, in a namespace of their own."""

    def __init__(self, backend, **overrides):
        params = {**FAST, **overrides}
        self.ns = f"/t{os.getpid()}_{next(_namespaces)}"
        self.node = NeurokNode(backend=backend, namespace=self.ns,
                               parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
        self.fqn = self.node.get_fully_qualified_name()
        self.probe = Node("probe", namespace=self.ns)
        base = f"{self.fqn}/"
        self.mesh_pub = self.probe.create_publisher(Marker, base + "mesh", MESH_QOS)
        self.action_pub = self.probe.create_publisher(MultiDOFJointTrajectory, base + "action", ACTION_QOS)
        self.click_pub = self.probe.create_publisher(PointStamped, base + "clicked_point", CLICKED_POINT_QOS)
        self.clouds, self.markers, self.diagnostics, self.meshes = [], [], [], []
        self.probe.create_subscription(PointCloud2, base + "trajectory", self.clouds.append, TRAJECTORY_QOS)
        self.probe.create_subscription(MarkerArray, base + "markers", self.markers.append, MARKERS_QOS)
        self.probe.create_subscription(Marker, base + "trajectory_mesh", self.meshes.append, TRAJECTORY_MESH_QOS)
        self.probe.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, DIAGNOSTICS_QOS)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.executor.add_node(self.probe)
        self.spin_until(lambda: all(p.get_subscription_count() for p in
                                    (self.mesh_pub, self.action_pub, self.click_pub)), 10, "matching")

    def _on_diagnostics(self, msg):
        if find_status(msg, f"{self.fqn}: state") is not None:
            self.diagnostics.append(msg)

    # --- diagnostics
    def statuses(self, which):
        name = f"{self.fqn}: {which}"
        return [find_status(a, name) for a in self.diagnostics]

    def state(self):
        return status_values(self.statuses("state")[-1])

    def input_event(self, stamp: Time, topic: str, timeout=30):
        """The input status that answers the input stamped `stamp` on `topic`."""
        key = stamp_text(stamp)

        def found():
            for s in self.statuses("input"):
                v = status_values(s)
                if v["input_stamp"] == key and v["topic"] == topic:
                    return s
            return None
        return self.spin_until(found, timeout, f"a diagnostic for {topic} stamped {key}")

    def rejection(self, stamp, topic, timeout=30):
        status = self.input_event(stamp, topic, timeout)
        assert status.level == DiagnosticStatus.ERROR, status.message
        return status.message

    # --- inputs
    def send_mesh(self, marker: Marker, timeout=60):
        marker.header.stamp = _stamp()
        self.mesh_pub.publish(marker)
        return marker.header.stamp

    def send_good_mesh(self, V, F, frame="object", timeout=60):
        stamp = self.send_mesh(mesh_to_marker(V, F, frame))
        key = stamp_text(stamp)
        self.spin_until(lambda: self.diagnostics and self.state().get("mesh_stamp") == key, timeout,
                        "the mesh to be encoded")
        return self.state()

    def send_action(self, positions, velocities, frame="object", stamp=None):
        cond = ContactConditions(np.asarray(positions, float).reshape(-1, 3),
                                 np.asarray(velocities, float).reshape(-1, 3))
        stamp = stamp or _stamp()
        self.action_pub.publish(conditions_to_trajectory(cond, frame, stamp))
        return stamp

    def cloud_for(self, stamp, timeout=60):
        key = stamp_text(stamp)

        def found():
            for s in self.statuses("input"):
                v = status_values(s)
                if v["input_stamp"] == key and s.level == DiagnosticStatus.ERROR:
                    raise AssertionError(f"the input stamped {key} was refused: {s.message}")
            return next((c for c in self.clouds if c.header.stamp == stamp), None)
        return self.spin_until(found, timeout, f"the trajectory stamped {key}")

    def wait_for_prediction_diagnostics(self, stamp, timeout=10):
        key = stamp_text(stamp)
        self.spin_until(lambda: self.state().get("last_stamp") == key, timeout, "prediction diagnostics")
        return self.state()


@pytest.fixture(scope="module")
def mesh():
    return _small_mesh()


@pytest.fixture(scope="module")
def harness(ros_context, backend, mesh):
    h = Harness(backend)
    h.send_good_mesh(*mesh)
    yield h
    h.close()


def _top_contact(V):
    """A vertex on the top face (z max), a real surface point."""
    return V[np.argmax(V[:, 2] + 1e-3 * V[:, 0])]


def test_mesh_and_action_give_trajectory_markers_and_diagnostics(harness, mesh):
    V, F = mesh
    state = harness.state()
    assert state["state"] == "ready" and state["mesh_vertices"] == str(len(V))
    assert state["mesh_encoding_from_cache"] == "false" and float(state["mesh_encode_s"]) > 0
    harness.markers.clear()
    stamp = harness.send_action(_top_contact(V), [0.0, 0.0, -0.5])
    cloud = harness.cloud_for(stamp)
    # frame, stamp (the action's), T x N organised in input vertex order
    assert cloud.header.frame_id == "object" and cloud.header.stamp == stamp
    assert (cloud.height, cloud.width) == (3, len(V))
    frames, times = cloud_to_frames(cloud)
    np.testing.assert_allclose(times, [0.0, 0.1, 0.2], atol=1e-6)
    assert np.isfinite(frames).all()
    # frame 0 is the input pose as the model reproduces it: each column near ITS input vertex
    size = np.linalg.norm(V.max(0) - V.min(0))
    err = np.linalg.norm(frames[0] - V, axis=1)
    shuffled = np.linalg.norm(frames[0] - V[np.roll(np.arange(len(V)), 1)], axis=1)
    assert err.mean() < 0.1 * size and err.mean() < 0.5 * shuffled.mean()
    # trajectory_mesh: the mesh whose vertices are the columns
    tm = marker_to_mesh(harness.meshes[-1])
    np.testing.assert_allclose(tm.vertices, V, atol=1e-6)
    np.testing.assert_array_equal(tm.faces, F)
    # diagnostics with timings, first prediction on a fresh encoding
    state = harness.wait_for_prediction_diagnostics(stamp)
    assert state["encoding_from_cache"] == "false" and float(state["encode_s"]) > 0
    assert float(state["simulate_s"]) > 0 and float(state["latency_s"]) >= float(state["simulate_s"])
    assert state["last_frames"] == "3" and state["last_vertices"] == str(len(V))
    # markers: DELETEALL first (with the contact arrow), then TRIANGLE_LIST frames of the prediction
    def announced():
        return next((i for i, a in enumerate(harness.markers) if a.markers[0].action == Marker.DELETEALL
                     and any(m.ns == "neurok_contacts" and m.type == Marker.ARROW for m in a.markers)), None)
    harness.spin_until(lambda: announced() is not None and len(harness.markers) > announced() + 1, 10,
                       "playback markers")
    tri = harness.markers[announced() + 1].markers[0]
    assert (tri.ns, tri.type, tri.header.frame_id) == ("neurok_playback", Marker.TRIANGLE_LIST, "object")
    corners = np.array([[p.x, p.y, p.z] for p in tri.points])
    assert any(np.array_equal(corners, frame.astype(np.float64)[F].reshape(-1, 3)) for frame in frames)


def test_second_action_uses_cached_encoding(harness, mesh):
    V, _ = mesh
    stamp = harness.send_action(_top_contact(V), [0.1, 0.0, -0.2])
    harness.cloud_for(stamp)
    state = harness.wait_for_prediction_diagnostics(stamp)
    assert state["encoding_from_cache"] == "true" and float(state["encode_s"]) == 0.0
    # the same mesh sent again is not re-encoded either
    again = harness.send_good_mesh(*mesh)
    assert again["mesh_encoding_from_cache"] == "true" and float(again["mesh_encode_s"]) == 0.0


def _nan_vertex_marker(V, F):
    """An OBJ file (text) whose vertex 5 has a NaN coordinate."""
    rows = [f"v {x!r} {y!r} {z!r}" for x, y, z in V.tolist()]
    rows[5] = "v 0.0 nan 0.0"
    rows += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in F.tolist()]
    m = mesh_to_marker(V, F, "object", embed_format="obj")
    m.mesh_file.data = array.array("B", "\n".join(rows).encode())
    return m


def _out_of_range_marker(V, F):
    ply = (b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
           b"element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n")
    m = mesh_to_marker(V, F, "object")
    m.mesh_file.data = array.array("B", ply)
    return m


def _garbage_marker(V, F):
    m = mesh_to_marker(V, F, "object")
    m.mesh_file.data = array.array("B", b"this is not a ply file at all")
    return m


def _empty_marker(V, F):
    m = triangle_list_marker(V, F, "object")
    m.points = []
    return m


def _sphere_marker(V, F):
    m = mesh_to_marker(V, F, "object")
    m.type = Marker.SPHERE
    return m


def _empty_faces_ply(V, F):
    m = mesh_to_marker(V, F, "object")
    m.mesh_file.data = array.array("B", b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                                        b"property float y\nproperty float z\nelement face 0\n"
                                        b"property list uchar int vertex_indices\nend_header\n"
                                        b"0 0 0\n1 0 0\n0 1 0\n")
    return m


@pytest.mark.parametrize("build, words", [
    (_empty_marker, "no points"),
    (_empty_faces_ply, "no triangles"),
    (_nan_vertex_marker, "vertex 5 is not finite"),
    (_out_of_range_marker, "face index 7 out of range"),
    (_garbage_marker, "could not read mesh bytes"),
    (_sphere_marker, "marker type SPHERE is not a mesh"),
])
def test_bad_mesh_is_rejected_and_last_good_mesh_kept(harness, mesh, build, words):
    V, F = mesh
    key = harness.state()["mesh_key"]
    stamp = harness.send_mesh(build(V, F))
    message = harness.rejection(stamp, "~/mesh")
    assert words in message, message
    # still alive and ready, still the old mesh (test_bad_actions_are_rejected then predicts on it)
    harness.spin_until(lambda: harness.state()["state"] == "ready", 10, "ready again")
    assert harness.state()["mesh_key"] == key and harness.node.mesh.key.startswith(key)


def _action_msg(positions, velocities, frame="object"):
    return conditions_to_trajectory(ContactConditions(np.reshape(positions, (-1, 3)), np.reshape(velocities, (-1, 3))),
                                    frame, _stamp())


def test_bad_actions_are_rejected(harness, mesh):
    V, _ = mesh
    top = _top_contact(V)
    far = conditions_to_trajectory(ContactConditions([top + [0, 0, 0.5]], [[0, 0, -1.0]]), "object", _stamp())
    nan = _action_msg(top, [0, 0, -1.0])
    nan.points[0].velocities[0].linear.y = float("nan")
    empty = MultiDOFJointTrajectory()
    empty.header.frame_id, empty.header.stamp = "object", _stamp()
    no_points = _action_msg(top, [0, 0, -1.0])
    no_points.points = []
    wrong_frame = _action_msg(top, [0, 0, -1.0], frame="world")
    cases = [(far, "is 0.5 m from the mesh surface; the tolerance is"),
             (nan, "NaN"), (empty, "no joints"), (no_points, "no points"),
             (wrong_frame, "frame 'world' is not the mesh frame 'object'")]
    for msg, words in cases:
        harness.action_pub.publish(msg)
        message = harness.rejection(msg.header.stamp, "~/action")
        assert words in message, message
    ok = harness.send_action(top, [0, 0, -0.2])
    assert harness.cloud_for(ok).width == len(V)


def test_clicked_point_pushes_along_the_normal(harness, mesh):
    from neurok_ros.simulation.surface_index import project_to_surface

    V, F = mesh
    # a point on the middle of a face of the lid
    face = int(np.argmax(V[F].mean(axis=1)[:, 2]))
    target = V[F[face]].mean(axis=0)
    click = PointStamped()
    click.header.frame_id, click.header.stamp = "object", _stamp()
    click.point = Point(x=float(target[0]), y=float(target[1]), z=float(target[2]))
    harness.markers.clear()
    harness.click_pub.publish(click)
    cloud = harness.cloud_for(click.header.stamp)
    assert cloud.width == len(V)
    def arrow_at_target():  # the arrow of this push ends at the contact
        return [m for a in harness.markers for m in a.markers if m.ns == "neurok_contacts" and m.type == Marker.ARROW
                and np.allclose([m.points[1].x, m.points[1].y, m.points[1].z], target, atol=1e-9)]
    arrow = harness.spin_until(arrow_at_target, 10, "the contact arrow of the click")[-1]
    start, end = (np.array([p.x, p.y, p.z]) for p in arrow.points)
    direction = (end - start) / np.linalg.norm(end - start)
    normal = project_to_surface(V, F, target[None]).normals[0]
    np.testing.assert_allclose(direction, -normal, atol=1e-9)  # along the inward normal
    # a click in the air is refused
    click.header.stamp = _stamp()
    click.point.z = float(target[2]) + 1.0
    harness.click_pub.publish(click)
    assert "m from the mesh surface; the tolerance is" in harness.rejection(click.header.stamp, "~/clicked_point")


def test_burst_of_actions_simulates_only_the_latest(harness, mesh):
    V, _ = mesh
    top = _top_contact(V)
    worker = harness.node._worker
    assert harness.node.wait_idle(30)
    before = (harness.node.predictions, worker.submitted["action"], worker.superseded["action"],
              worker.processed["action"])
    harness.clouds.clear()
    stamps = []
    started = time.monotonic()
    for i in range(100):  # 100 actions within one second, callbacks running in between
        stamps.append(harness.send_action(top, [0.0, 0.0, -0.2 - 0.001 * i]))
        harness.executor.spin_once(timeout_sec=0.002)
    burst_s = time.monotonic() - started
    assert burst_s < 1.5
    harness.cloud_for(stamps[-1])
    assert harness.node.wait_idle(30)
    harness.spin_for(0.2)
    simulated = harness.node.predictions - before[0]
    received = worker.submitted["action"] - before[1]
    superseded = worker.superseded["action"] - before[2]
    processed = worker.processed["action"] - before[3]
    # every action that reached the node was either run (simulated or refused) or replaced while
    # waiting: no queue
    assert processed + superseded == received and simulated <= processed
    # only what one worker can do in the burst (one prediction at a time) plus the latest one
    fastest = min(float(harness.state()["simulate_s"]), 0.1)
    assert processed <= 2 + int(burst_s / fastest), (processed, received, burst_s)
    assert received >= 20 and superseded >= received - processed
    # the last published trajectory answers the last action
    assert harness.clouds[-1].header.stamp == stamps[-1]
    assert {stamp_text(c.header.stamp) for c in harness.clouds} <= {stamp_text(s) for s in stamps}


def test_action_before_any_mesh_and_decimation(ros_context, backend):
    h = Harness(backend, max_vertices=60)
    try:
        stamp = h.send_action([0, 0, 0], [0, 0, -1.0])
        assert "action before any mesh" in h.rejection(stamp, "~/action")
        big = trimesh.creation.icosphere(subdivisions=2, radius=0.1)  # 162 vertices
        stamp = h.send_mesh(mesh_to_marker(big.vertices, big.faces, "object"))
        status = h.input_event(stamp, "~/mesh")
        assert status.level == DiagnosticStatus.WARN and "decimated from 162 to" in status.message, status.message
        h.spin_until(lambda: h.meshes, 10, "the decimated mesh on ~/trajectory_mesh")
        small = marker_to_mesh(h.meshes[-1])
        assert 4 <= len(small.vertices) <= 60
        action = h.send_action([0, 0, 0.1], [0, 0, -0.5])
        cloud = h.cloud_for(action)
        assert cloud.width == len(small.vertices)
        h.node.set_parameters([Parameter("decimate", value=False)])
        stamp = h.send_mesh(mesh_to_marker(big.vertices, big.faces, "object"))
        assert "over max_vertices 60" in h.rejection(stamp, "~/mesh")
    finally:
        h.close()


def test_default_chart_with_a_held_base_through_the_node(ros_context, backend, mesh):
    """The default (articulation auto): the node reads the laptop's hinge when the mesh arrives and
    simulates it in joint coordinates; a pin box on the base as a parameter. The diagnostics say so,
    the contact velocity is met at t = 0, the pushed lid turns rigidly and the base stays exactly."""
    V, F = mesh
    bottom = V[:, 2] < V[:, 2].min() + 0.005  # the base's underside (the lid reaches 1 cm down)
    box = [*(V[bottom].min(0) - 1e-3), *(V[bottom].max(0) + 1e-3)]
    h = Harness(backend, pin_boxes=[float(v) for v in box], duration=0.3, gravity=[0.0, 0.0, 0.0])
    try:
        h.send_good_mesh(V, F)
        stamp = h.send_action(_top_contact(V), [0.0, 0.3, 0.0])
        frames, _ = cloud_to_frames(h.cloud_for(stamp))
        assert np.isfinite(frames).all()
        if not isinstance(backend, FakeBackend):
            state = h.wait_for_prediction_diagnostics(stamp)
            assert state["sim_chart"] == "joints" and not bool(state["sim_free_base"] == "True")
            assert 0 <= float(state["sim_contact_velocity_residual"]) < 0.3  # the hinge takes the push's tangent part
            moved = np.linalg.norm(frames[-1] - frames[0], axis=1)
            assert moved[~bottom].max() > 0.03  # the lid turns freely about its hinge
            assert moved[bottom].max() < 1e-6  # the anchored, held base stays
    finally:
        h.close()


def test_the_object_description_and_its_joint_trajectory(ros_context, backend, mesh, tmp_path):
    """After a mesh, ~/object_description carries the URDF of its readout (a late subscriber gets it; it
    loads in yourdfpy with the joints `neurok articulate` reads from that mesh; subscribers with rclpy's
    default QoS get it and the trajectories too);
    after an action, ~/joint_trajectory carries the URDF's joints, and ~/joint_states plays them back,
    with /tf carrying the same links' frames (RViz's RobotModel needs nothing else)."""
    if isinstance(backend, FakeBackend):
        pytest.skip("the fake backend reads no joints")
    import xml.etree.ElementTree as ET
    from urllib.parse import urlparse

    V, F = mesh
    h = Harness(backend, duration=0.3, gravity=[0.0, 0.0, 0.0], playback_rate=1.0)
    try:
        base = f"{h.fqn}/"
        plain = {"description": [], "joints": [], "cloud": []}  # subscribers with rclpy's default QoS (10)
        h.probe.create_subscription(String, base + "object_description", plain["description"].append, 10)
        h.probe.create_subscription(JointTrajectory, base + "joint_trajectory", plain["joints"].append, 10)
        h.probe.create_subscription(PointCloud2, base + "trajectory", plain["cloud"].append, 10)
        h.send_good_mesh(V, F)
        descriptions, trajectories, states = [], [], []
        h.probe.create_subscription(String, base + "object_description", descriptions.append, DESCRIPTION_QOS)
        h.probe.create_subscription(JointTrajectory, base + "joint_trajectory", trajectories.append,
                                    JOINT_TRAJECTORY_QOS)
        h.probe.create_subscription(JointState, base + "joint_states", states.append, JOINT_STATES_QOS)
        from tf2_msgs.msg import TFMessage

        from neurok_ros.ros.qos import TF_QOS

        frames_seen = []
        h.probe.create_subscription(TFMessage, "/tf", frames_seen.append, TF_QOS)
        h.spin_until(lambda: descriptions, 10, "the object description (transient local)")
        robot = ET.fromstring(descriptions[-1].data)
        joints = [j for j in robot.iter("joint") if j.get("type") != "fixed"]
        assert joints and all(j.find("axis") is not None for j in joints)
        # it loads in yourdfpy, with the joints `neurok articulate` reads from the mesh the node received
        import yourdfpy

        from neurok_ros.articulation.readout import articulate

        path = tmp_path / "object.urdf"
        path.write_text(descriptions[-1].data)
        loaded = yourdfpy.URDF.load(str(path), load_meshes=False, build_collision_scene_graph=False,
                                    build_scene_graph=False)
        direct = articulate(backend.model, h.node._mesh.vertices, h.node._mesh.faces)
        assert sorted(j.name for j in loaded.robot.joints if j.type != "fixed") == sorted(j.name for j in direct.joints)
        for joint in direct.joints:
            urdf_joint = next(j for j in loaded.robot.joints if j.name == joint.name)
            assert urdf_joint.type in (joint.type, "continuous")
            np.testing.assert_allclose(np.abs(urdf_joint.axis @ joint.axis), 1.0, atol=1e-6)
        for mesh_element in robot.iter("mesh"):
            uri = urlparse(mesh_element.get("filename"))
            assert uri.scheme == "file" and os.path.isfile(uri.path)
        stamp = h.send_action(_top_contact(V), [0.0, 0.3, 0.0])
        frames, _ = cloud_to_frames(h.cloud_for(stamp))
        h.spin_until(lambda: trajectories, 10, "the joint trajectory")
        names, times, positions, velocities = trajectory_arrays(trajectories[-1])
        assert names == [j.get("name") for j in joints] and trajectories[-1].header.stamp == stamp
        assert positions.shape == (len(frames), len(names)) and np.allclose(times, np.arange(len(frames)) * 0.1)
        assert np.abs(positions[-1]).max() > 0.05 and np.isfinite(velocities).all()
        np.testing.assert_allclose(positions[1], 0.1 * velocities[0], rtol=1e-6)  # no gravity: a constant rate
        h.spin_until(lambda: len(states) > 3, 10, "joint states")
        assert states[-1].name == names and len(states[-1].position) == len(names)
        children = {j.find("child").get("link") for j in robot.iter("joint")}
        root = ({link.get("name") for link in robot.iter("link")} - children).pop()

        def ours(message):
            return {t.child_frame_id for t in message.transforms} == children | {root}

        h.spin_until(lambda: any(ours(m) for m in frames_seen), 10, "the link frames on /tf")
        turning = {j.find("child").get("link") for j in joints if j.get("type") == "revolute"}

        def turned(message):  # a frame of the predicted motion, not the rest pose
            return ours(message) and any(abs(t.transform.rotation.w) < 1.0 - 1e-6 for t in message.transforms
                                         if t.child_frame_id in turning)

        h.spin_until(lambda: any(turned(m) for m in frames_seen), 10, "a turned link on /tf")
        h.spin_until(lambda: all(plain.values()), 10, "the outputs on default-QoS subscribers")
        assert plain["description"][-1].data == descriptions[-1].data
        assert trajectory_arrays(plain["joints"][-1])[0] == names
        mine = [m for m in frames_seen if turned(m)][-1]
        assert {t.child_frame_id: t for t in mine.transforms}[root].header.frame_id == "object"
    finally:
        h.close()


def test_parameters_load_from_params_file(ros_context, tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("/**/neurok_node:\n  ros__parameters:\n    duration: 0.5\n    fps: 20.0\n"
                    "    gravity: [0.0, -9.81, 0.0]\n    max_vertices: 1234\n    frame_id: base_link\n")
    node = NeurokNode(backend=FakeBackend(), namespace=f"/p{os.getpid()}",
                      cli_args=["--ros-args", "--params-file", str(path)])
    try:
        got = {p: node.get_parameter(p).value for p in ("duration", "fps", "max_vertices", "frame_id", "mass")}
        assert got == {"duration": 0.5, "fps": 20.0, "max_vertices": 1234, "frame_id": "base_link",
                       "mass": default_values()["mass"]}
        assert list(node.get_parameter("gravity").value) == [0.0, -9.81, 0.0]
        # ranges and constraints are enforced
        assert not node.set_parameters([Parameter("fps", value=-1.0)])[0].successful
        assert not node.set_parameters([Parameter("gravity", value=[1.0, 2.0])])[0].successful
        assert not node.set_parameters([Parameter("method", value="leapfrog")])[0].successful
        assert node.set_parameters([Parameter("fps", value=15.0)])[0].successful
        assert not node.set_parameters([Parameter("device", value="cpu")])[0].successful  # read-only
        descriptor = node.describe_parameter("duration")
        assert descriptor.floating_point_range[0].to_value > 0 and descriptor.description
    finally:
        node.destroy_node()


def test_pin_boxes_reach_the_simulation_settings(ros_context, tmp_path):
    """Unset by default (no pins); from a params file they become the simulation's pin boxes; a box
    that is not 6 numbers or is inside out is refused."""
    from neurok_ros.ros.node_parameters import read_settings
    from neurok_ros.ros.prediction_backend import simulation_settings

    plain = NeurokNode(backend=FakeBackend(), namespace=f"/q{os.getpid()}")
    try:
        assert simulation_settings(read_settings(plain)).pins == ()
        assert not plain.set_parameters([Parameter("pin_boxes", value=[0.0, 0.0, 0.0, 1.0, 1.0])])[0].successful
        assert not plain.set_parameters([Parameter("pin_boxes", value=[0.0, 0.0, 0.0, 1.0, -1.0, 1.0])])[0].successful
    finally:
        plain.destroy_node()
    path = tmp_path / "params.yaml"
    path.write_text("/**/neurok_node:\n  ros__parameters:\n"
                    "    pin_boxes: [-0.2, -0.15, -0.01, 0.2, 0.15, 0.02, 0.0, 0.0, 0.0, 0.1, 0.1, 0.1]\n"
                    "    pin_stiffness: 2500.0\n")
    node = NeurokNode(backend=FakeBackend(), namespace=f"/r{os.getpid()}",
                      cli_args=["--ros-args", "--params-file", str(path)])
    try:
        settings = simulation_settings(read_settings(node))
        assert [(b.lower, b.upper) for b in settings.pins] == [((-0.2, -0.15, -0.01), (0.2, 0.15, 0.02)),
                                                               ((0.0, 0.0, 0.0), (0.1, 0.1, 0.1))]
        assert settings.pin_stiffness == 2500.0
        assert node.set_parameters([Parameter("pin_boxes", value=[0.0, 0.0, 0.0, 1.0, 1.0, 1.0])])[0].successful
        assert len(simulation_settings(read_settings(node)).pins) == 1
    finally:
        node.destroy_node()


def test_shipped_params_file_loads(ros_context):
    """config/neurok.yaml as --params-file on a node at the root namespace (the `neurok_node:` key)."""
    from neurok_ros.config_files import config_path

    overrides = {"max_vertices": 77, "duration": 7.5}  # the file sets max_vertices, not duration
    path = config_path("neurok.yaml")
    node = NeurokNode(backend=FakeBackend(), cli_args=["--ros-args", "--params-file", str(path)],
                      defaults={**default_values(), **overrides, "warmup": False})
    try:
        assert node.get_parameter("max_vertices").value == default_values()["max_vertices"] != 77
        assert node.get_parameter("duration").value == 7.5
    finally:
        node.destroy_node()


def test_rviz_robot_model_reads_the_object_description(ros_context):
    """config/neurok.rviz shows the URDF: an enabled RobotModel on the node's ~/object_description
    (std_msgs/String), reliable and transient local like the node's publisher."""
    import yaml
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    from neurok_ros.config_files import config_path

    layout = yaml.safe_load(config_path("neurok.rviz").read_text())
    model = next(d for d in layout["Visualization Manager"]["Displays"]
                 if d["Class"] == "rviz_default_plugins/RobotModel")
    topic = model["Description Topic"]
    assert model["Enabled"] and model["Value"] and model["Description Source"] == "Topic"
    assert (topic["Reliability Policy"], topic["Durability Policy"]) == ("Reliable", "Transient Local")
    assert (DESCRIPTION_QOS.reliability, DESCRIPTION_QOS.durability) == (ReliabilityPolicy.RELIABLE,
                                                                         DurabilityPolicy.TRANSIENT_LOCAL)
    node = NeurokNode(backend=FakeBackend(), defaults={**default_values(), "warmup": False})
    try:
        published = {(p.topic_name, p.msg_type) for p in node.publishers}
        assert (topic["Value"], String) in published
    finally:
        node.destroy_node()


def test_simulation_defaults_live_in_simulation_yaml_and_the_params_file_overrides(tmp_path):
    from neurok_ros.config_files import config_path, load_yaml
    from neurok_ros.ros.node_parameters import SIMULATION_PARAMETERS
    from neurok_ros.simulation.settings import default_settings

    values = default_values()
    assert set(values) == {s.name for s in SPECS} == set(settings_fields())
    shipped = load_yaml(config_path("neurok.yaml"))["neurok_node"]["ros__parameters"]
    assert not set(shipped) & set(SIMULATION_PARAMETERS)  # one place for each default
    simulation = default_settings()
    for name in SIMULATION_PARAMETERS:
        theirs = getattr(simulation, name)
        expected = (list(theirs) if name == "gravity" else theirs or 0 if name == "coordinates" else theirs)
        assert values[name] == expected, name
    path = tmp_path / "params.yaml"
    path.write_text("neurok_node:\n  ros__parameters:\n" + "".join(
        f"    {k}: {json.dumps(v)}\n" for k, v in {**shipped, "duration": 3.5, "dynamics_map": "decoder"}.items()))
    overridden = default_values(path)
    assert overridden["duration"] == 3.5 and overridden["dynamics_map"] == "decoder"
    assert overridden["fps"] == simulation.fps
    path.write_text("neurok_node:\n  ros__parameters:\n" + "".join(
        f"    {k}: {json.dumps(v)}\n" for k, v in {**shipped, "surrogate_degree": 0}.items()))
    with pytest.raises(NeurokInputError, match="surrogate_degree"):
        default_values(path)


def test_triangle_list_template_matches_the_message_path():
    from rclpy.serialization import deserialize_message, serialize_message

    from neurok_ros.ros.playback_markers import TriangleListTemplate, frame_marker

    V, F = _small_mesh()
    for frame_id in ("object", "a_longer_frame_name", ""):
        template = TriangleListTemplate(F, frame_id)
        assert template.ok
        expected = deserialize_message(serialize_message(MarkerArray(markers=[frame_marker(V, F, frame_id)])),
                                       MarkerArray)
        assert deserialize_message(template.serialised(V), MarkerArray) == expected


def test_latest_only_worker_replaces_waiting_jobs():
    ran = []
    gate = __import__("threading").Event()

    def handler(kind, job):
        gate.wait(5)
        ran.append((kind, job))

    worker = LatestOnlyWorker(handler)
    try:
        worker.submit("action", 0)
        time.sleep(0.05)  # 0 is running, blocked on the gate
        for i in range(1, 100):
            worker.submit("action", i)
        worker.submit("mesh", "m")
        gate.set()
        assert worker.wait_idle(5)
        assert ran == [("action", 0), ("mesh", "m"), ("action", 99)]
        assert worker.superseded["action"] == 98
    finally:
        worker.stop()


def test_worker_survives_a_crashing_job():
    errors = []
    worker = LatestOnlyWorker(lambda kind, job: 1 / job, on_error=lambda kind, exc: errors.append(exc))
    try:
        worker.submit("action", 0)
        assert worker.wait_idle(5)
        worker.submit("action", 1)
        assert worker.wait_idle(5)
        assert len(errors) == 1 and worker.processed["action"] == 2
    finally:
        worker.stop()


def test_encoding_cache_is_keyed_by_vertices_and_faces():
    V, F = _small_mesh()
    cache = EncodingCache(capacity=2)
    calls = []
    value, cached, _ = cache.get_or_encode(mesh_key(V, F), lambda: calls.append(1) or "a")
    assert (value, cached) == ("a", False)
    assert cache.get_or_encode(mesh_key(V.copy(), F.copy()), lambda: "b")[:2] == ("a", True)
    moved = V.copy()
    moved[0, 0] += 1e-9
    assert mesh_key(moved, F) != mesh_key(V, F)
    cache.get_or_encode(mesh_key(moved, F), lambda: "c")
    cache.get_or_encode("third", lambda: "d")
    assert len(cache) == 2 and cache.get_or_encode(mesh_key(V, F), lambda: "e")[:2] == ("e", False)


FAST_ARGS = ["--param", "warmup:=false", "--param", "duration:=0.2", "--param", "fps:=10.0",
             "--param", "simulation_points:=64", "--param", "device:=cpu", "--param", "threads:=1"]


def test_serve_in_another_process_answers_the_client(ros_context):
    """`neurok serve` as a separate process; NeurokClient sends the example mesh file and a push."""
    import signal
    import subprocess
    import sys

    from neurok_ros.geometry.mesh_io import load_mesh
    from neurok_ros.ros.client import NeurokClient

    ns = f"/serve{os.getpid()}"
    proc = subprocess.Popen([sys.executable, "-m", "neurok_ros", "serve", "--namespace", ns, *FAST_ARGS],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with NeurokClient(f"{ns}/neurok_node") as client:
            client.wait_for_server(90)
            state = client.send_mesh_file(EXAMPLE_MESH)
            V, F = load_mesh(EXAMPLE_MESH)
            assert state["mesh_vertices"] == str(len(V))
            contact = V[np.argmax(V[:, 2])]
            reply = client.request([contact], [[0.0, -0.3, 0.0]])
            assert reply.frames.shape == (3, len(V), 3) and reply.frame_id == "object"
            np.testing.assert_allclose(reply.vertices, V, atol=1e-6)  # the columns' mesh: the input
            np.testing.assert_array_equal(reply.faces, F)
            assert float(reply.diagnostics["simulate_s"]) > 0 and reply.latency_s > 0
            assert reply.energy.shape == (3, 3) and reply.energy[0, 0] > 0  # the push: kinetic at t = 0
            np.testing.assert_allclose(reply.energy[:, 2], reply.energy[:, 0] + reply.energy[:, 1], rtol=1e-5)
            # the example laptop has a hinge: its URDF and the push in joints come back too
            assert reply.joints is not None and reply.joints["positions"].shape == (3, len(reply.joints["names"]))
            assert client.description is not None and all(f'name="{n}"' in client.description
                                                          for n in reply.joints["names"])
            with pytest.raises(NeurokInputError, match="tolerance"):
                client.request([contact + [0, 0, 1.0]], [[0.0, 0.0, -1.0]])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert proc.returncode == 0, out


def test_request_command_with_spawned_node(ros_context, tmp_path, capsys):
    from neurok_ros.cli import main
    from neurok_ros.geometry.mesh_io import load_mesh

    V, _ = load_mesh(EXAMPLE_MESH)
    contact = V[np.argmax(V[:, 2])]
    out = tmp_path / "traj.npz"
    rc = main(["request", EXAMPLE_MESH, "--contact", *map(str, contact), "--velocity", "0", "-0.3", "0",
               "--out", str(out), "--spawn-node", "--json", "--joints", *FAST_ARGS])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1],
                         parse_constant=lambda token: pytest.fail(f"non-standard JSON token {token}"))
    assert summary["frames"] == 3 and summary["vertices"] == len(V) and summary["latency_s"] > 0
    data = np.load(out)
    assert data["frames"].shape == (3, len(V), 3) and data["times"].shape == (3,)
    assert str(data["frame_id"]) == "object" and data["contacts"].shape == (1, 3)
    names = [str(n) for n in data["joint_names"]]
    assert data["joint_positions"].shape == (3, len(names)) and set(summary["joints"]) == set(names)
    assert summary["joints"][names[0]]["final"] == pytest.approx(float(data["joint_positions"][-1, 0]))


def test_serve_arguments_become_ros_arguments():
    from neurok_ros.cli import build_parser
    from neurok_ros.cli.serve_command import ros_arguments

    args = build_parser().parse_args(["serve", "--params-file", "a.yaml", "--param", "fps:=60.0", "--namespace",
                                      "robot", "--ros-args", "-p", "duration:=1.0"])
    assert ros_arguments(args) == ["neurok_serve", "--ros-args", "--params-file", "a.yaml", "-p", "fps:=60.0",
                                   "-r", "__ns:=/robot", "-p", "duration:=1.0"]


@pytest.mark.parametrize("budget", [400, 100])  # quadric only; vertex clustering first (> 4x over)
def test_decimation_keeps_the_shape_within_the_budget(budget):
    from neurok_ros.geometry.decimation import decimate_to_vertices

    sphere = trimesh.creation.icosphere(subdivisions=3)  # 642 vertices, radius 1
    small = decimate_to_vertices(sphere.vertices, sphere.faces, budget)
    assert 4 <= len(small.vertices) <= budget and small.input_vertices == 642
    radii = np.linalg.norm(small.vertices, axis=1)
    assert np.abs(radii - 1).max() < 0.1


@pytest.mark.parametrize("reliable", [False, True])
def test_observation_qos_follows_its_parameter(ros_context, reliable):
    """~/observation is BEST_EFFORT (sensor data) by default; observation_reliable asks for RELIABLE."""
    from rclpy.qos import ReliabilityPolicy

    h = Harness(FakeBackend(), observation_reliable=reliable)
    try:
        topic = f"{h.fqn}/observation"
        h.spin_until(lambda: h.probe.get_subscriptions_info_by_topic(topic), 10, "the observation subscription")
        qos = h.probe.get_subscriptions_info_by_topic(topic)[0].qos_profile
        assert qos.reliability == (ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT)
    finally:
        h.close()
