"""The project's own ROS 2 interfaces (neurok_interfaces, built into the venv by `make setup`): the
Articulation message against the URDF export and through a real publisher and subscriber, and the
PredictMotion action between a real ActionServer (neurok_ros.ros.predict_motion_action) and ActionClient:
goal, feedback, result, a rejected goal and an accepted cancel request."""
from __future__ import annotations

import json
import math
import os
import threading
import time

import numpy as np
import pytest
from box_objects import box, chain, two_doors
from builtin_interfaces.msg import Time

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.articulation.urdf import read_urdf_joints, write_urdf

pytestmark = pytest.mark.ros

# Built by `make setup` (scripts/build_interfaces.py); a venv without it fails here, naming the fix.
try:
    from neurok_interfaces.action import PredictMotion
    from neurok_interfaces.msg import Articulation as ArticulationMsg, Joint as JointMsg
except ImportError as exc:  # pragma: no cover - only without the build
    raise ImportError(f"neurok_interfaces is not built into this venv ({exc}); run `make setup`") from exc

from neurok_ros.ros.articulation_message import articulation_to_message, message_to_articulation  # noqa: E402
from neurok_ros.ros.predict_motion_action import PredictMotionServer, goal_overrides  # noqa: E402


def _chain_with_welded_part():
    """The box chain (mount, two links on revolute joints) plus a fourth box welded to the mount (no joint)."""
    V, F, articulation, _ = chain()
    extra = box([0.03, 0.0, 0.48], [0.05, 0.02, 0.5])
    labels = np.concatenate([articulation.labels, np.full(len(extra.vertices), 3)])
    F = np.vstack([F, np.asarray(extra.faces) + len(V)])
    V = np.vstack([V, extra.vertices])
    joints = articulation.joints
    joints[1].lower, joints[1].upper = -math.inf, math.inf  # a continuous joint
    return V, F, Articulation(labels, joints, "articulated", ["mount", "link one", "link_two", "tag"], seconds=0.25)


def _assert_same_articulation(a: Articulation, b: Articulation):
    np.testing.assert_array_equal(a.labels, b.labels)
    assert (a.kind, a.seconds) == (b.kind, b.seconds)
    assert len(a.joints) == len(b.joints)
    for x, y in zip(a.joints, b.joints):
        assert (x.name, x.type, x.parent, x.child, x.lower, x.upper, x.confidence) == \
               (y.name, y.type, y.parent, y.child, y.lower, y.upper, y.confidence)
        np.testing.assert_array_equal(x.axis, y.axis)
        np.testing.assert_array_equal(x.origin, y.origin)


def test_articulation_message_matches_the_urdf_export(tmp_path):
    V, F, articulation = _chain_with_welded_part()
    urdf = write_urdf(tmp_path / "chain.urdf", V, F, articulation)
    msg = articulation_to_message(articulation, "object", Time(sec=3, nanosec=4), urdf.read_text())
    assert list(msg.part_names) == ["mount", "link_one", "link_two", "tag"]  # the URDF's link names
    assert msg.kind == ArticulationMsg.KIND_ARTICULATED and msg.urdf.startswith("<?xml")
    assert list(msg.vertex_parts) == articulation.labels.tolist()
    by_name = {j.name: j for j in msg.joints}
    assert [j.type for j in msg.joints] == [JointMsg.TYPE_REVOLUTE, JointMsg.TYPE_REVOLUTE, JointMsg.TYPE_FIXED]
    link_origin = {msg.part_names[0]: np.zeros(3)}
    for joint in msg.joints:
        link_origin[joint.child] = np.array([joint.origin.x, joint.origin.y, joint.origin.z])
    for exported in read_urdf_joints(urdf):
        joint = by_name[exported["name"]]
        assert (joint.parent, joint.child) == (exported["parent"], exported["child"])
        np.testing.assert_allclose(exported["origin"][:3, 3], link_origin[joint.child] - link_origin[joint.parent])
        if joint.type == JointMsg.TYPE_FIXED:
            assert exported["type"] == "fixed" and (joint.lower, joint.upper) == (0.0, 0.0)
            continue
        np.testing.assert_allclose(exported["axis"], [joint.axis.x, joint.axis.y, joint.axis.z])
        if math.isinf(joint.upper):
            assert exported["type"] == "continuous" and math.isinf(joint.lower)
        else:
            assert exported["type"] == joint.type
            assert (exported["lower"], exported["upper"]) == (joint.lower, joint.upper)
    assert len(read_urdf_joints(urdf)) == len(msg.joints)
    _assert_same_articulation(message_to_articulation(msg), articulation)


def test_articulation_without_vertex_parts_or_with_unknown_parts_is_refused():
    V, F, articulation, _ = two_doors()
    msg = articulation_to_message(articulation, with_vertex_parts=False)
    assert len(msg.vertex_parts) == 0 and [j.child for j in msg.joints] == ["part_1", "part_2"]
    with pytest.raises(ValueError, match="vertex_parts"):
        message_to_articulation(msg)
    msg = articulation_to_message(articulation)
    msg.joints[0].child = "lid"
    with pytest.raises(ValueError, match="'lid' is not in part_names"):
        message_to_articulation(msg)


def test_articulation_message_roundtrips_through_pubsub(ros_context):
    from neurok_ros.ros.loopback import publish_and_receive
    from neurok_ros.ros.qos import DESCRIPTION_QOS

    V, F, articulation = _chain_with_welded_part()
    sent = articulation_to_message(articulation, "object", Time(sec=7, nanosec=9), urdf="<robot name='x'/>")
    got = publish_and_receive(ArticulationMsg, sent, DESCRIPTION_QOS)
    assert got == sent  # every field, the infinite limits included
    assert got.header.frame_id == "object" and got.header.stamp.sec == 7
    assert math.isinf(got.joints[1].upper) and got.joints[2].type == JointMsg.TYPE_FIXED
    _assert_same_articulation(message_to_articulation(got), articulation)


def test_goal_overrides():
    goal = PredictMotion.Goal()
    assert goal_overrides(goal) == {}
    goal.duration, goal.fps, goal.gravity = 1.5, 30.0, [0.0, 0.0, 0.0]
    goal.free_base = PredictMotion.Goal.FREE_BASE_OFF
    assert goal_overrides(goal) == {"duration": 1.5, "fps": 30.0, "gravity": (0.0, 0.0, 0.0), "free_base": False}
    for name, value in (("duration", -1.0), ("fps", math.nan), ("gravity", [0.0, -9.81]), ("free_base", 3)):
        bad = PredictMotion.Goal()
        setattr(bad, name, value)
        with pytest.raises(ValueError, match=name):
            goal_overrides(bad)


# ---- the action through a real server and client ----

def _wait(done, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.01)


@pytest.fixture
def action_pair(ros_context):
    """(server node, client node, start(predict) -> ActionClient): an executor spinning both in a thread."""
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node

    suffix = f"{os.getpid()}_{time.monotonic_ns()}"
    server_node, client_node = Node(f"neurok_action_server_{suffix}"), Node(f"neurok_action_client_{suffix}")
    executor = MultiThreadedExecutor(num_threads=3)
    executor.add_node(server_node)
    executor.add_node(client_node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    made = []

    def start(predict):
        made.append(PredictMotionServer(server_node, predict))
        client = ActionClient(client_node, PredictMotion, f"/{server_node.get_name()}/predict_motion")
        made.append(client)
        spinner.start()
        _wait(client.server_is_ready, 10.0, "the PredictMotion server")
        return client

    yield start
    executor.shutdown(timeout_sec=2.0)
    for item in made:
        item.destroy()
    server_node.destroy_node()
    client_node.destroy_node()
    if spinner.is_alive():
        spinner.join(timeout=2.0)


def _send(client, goal, feedback):
    future = client.send_goal_async(goal, feedback_callback=lambda message: feedback.append(message.feedback))
    _wait(future.done, 10.0, "the goal response")
    return future.result()


def test_predict_motion_goal_feedback_and_result(action_pair):
    from action_msgs.msg import GoalStatus

    from neurok_ros.dynamics.contact_conditions import ContactConditions
    from neurok_ros.ros.contact_action import conditions_to_trajectory, trajectory_to_conditions
    from neurok_ros.ros.joint_messages import joint_trajectory
    from neurok_ros.ros.mesh_marker import marker_to_mesh, mesh_to_marker
    from neurok_ros.ros.trajectory_cloud import cloud_to_frames, frames_to_cloud

    V, F, articulation, _ = two_doors()
    received = {}

    def predict(goal, overrides, feedback):
        """Stands in for the node: decodes the goal as the node's topics do and answers a made-up motion."""
        mesh = marker_to_mesh(goal.mesh)
        received.update(overrides=overrides, vertices=mesh.vertices, conditions=trajectory_to_conditions(goal.contacts))
        assert feedback(0.0, "encoding mesh") and feedback(0.5, "simulating")
        times = np.arange(round(overrides["duration"] * overrides["fps"]) + 1) / overrides["fps"]
        frames = mesh.vertices[None] + times[:, None, None] * np.array([0.0, 0.0, -0.1])
        q = np.outer(times, [0.2, 0.1])
        stamp = goal.contacts.header.stamp
        feedback(1.0, "publishing")
        return PredictMotion.Result(
            joint_trajectory=joint_trajectory(["left", "right"], times, q, np.gradient(q, axis=0), "object", stamp),
            trajectory=frames_to_cloud(frames, times, "object", stamp),
            articulation=articulation_to_message(articulation, "object", stamp),
            summary_json=json.dumps({"frames": len(times), "overrides": sorted(overrides)}))

    client = action_pair(predict)
    conditions = ContactConditions(positions=[[0.1, 0.22, 0.2]], velocities=[[0.0, -0.5, 0.0]])
    goal = PredictMotion.Goal(mesh=mesh_to_marker(V, F, "object"),
                              contacts=conditions_to_trajectory(conditions, "object", Time(sec=11, nanosec=5)),
                              duration=0.5, fps=20.0, gravity=[0.0, 0.0, -9.81],
                              free_base=PredictMotion.Goal.FREE_BASE_ON)
    feedback = []
    handle = _send(client, goal, feedback)
    assert handle.accepted
    result_future = handle.get_result_async()
    _wait(result_future.done, 20.0, "the result")
    response = result_future.result()
    assert response.status == GoalStatus.STATUS_SUCCEEDED

    assert received["overrides"] == {"duration": 0.5, "fps": 20.0, "gravity": (0.0, 0.0, -9.81), "free_base": True}
    np.testing.assert_allclose(received["vertices"], V, atol=1e-6)  # PLY keeps float32 coordinates
    np.testing.assert_array_equal(received["conditions"].velocities, [[0.0, -0.5, 0.0]])
    _wait(lambda: len(feedback) == 3, 5.0, "three feedback messages")
    assert [(f.progress, f.stage) for f in feedback] == [(0.0, "encoding mesh"), (0.5, "simulating"),
                                                         (1.0, "publishing")]
    result = response.result
    frames, times = cloud_to_frames(result.trajectory)
    assert frames.shape == (11, len(V), 3) and times[-1] == pytest.approx(0.5)
    assert result.trajectory.header.stamp.sec == 11
    assert list(result.joint_trajectory.joint_names) == ["left", "right"] and len(result.joint_trajectory.points) == 11
    _assert_same_articulation(message_to_articulation(result.articulation), articulation)
    assert json.loads(result.summary_json) == {"frames": 11, "overrides": ["duration", "fps", "free_base", "gravity"]}


def test_predict_motion_rejects_a_bad_goal_and_accepts_a_cancel(action_pair):
    from action_msgs.msg import GoalStatus
    from action_msgs.srv import CancelGoal

    calls = []

    def predict(goal, overrides, feedback):
        """Runs until the client cancels (10 s at most)."""
        calls.append(overrides)
        deadline = time.monotonic() + 10.0
        while feedback(0.1, "simulating"):
            if time.monotonic() > deadline:
                raise TimeoutError("no cancel request arrived")
            time.sleep(0.02)
        return PredictMotion.Result(summary_json=json.dumps({"canceled": True}))

    client = action_pair(predict)
    feedback = []
    assert not _send(client, PredictMotion.Goal(gravity=[0.0, -9.81]), feedback).accepted  # 2 values: refused
    handle = _send(client, PredictMotion.Goal(), feedback)
    assert handle.accepted
    _wait(lambda: feedback, 10.0, "a feedback")
    cancel_future = handle.cancel_goal_async()
    _wait(cancel_future.done, 10.0, "the cancel response")
    cancel = cancel_future.result()
    assert cancel.return_code == CancelGoal.Response.ERROR_NONE
    assert [bytes(g.goal_id.uuid) for g in cancel.goals_canceling] == [bytes(handle.goal_id.uuid)]
    result_future = handle.get_result_async()
    _wait(result_future.done, 10.0, "the result")
    assert result_future.result().status == GoalStatus.STATUS_CANCELED
    assert json.loads(result_future.result().result.summary_json) == {"canceled": True}
    assert calls == [{}]  # only the accepted goal ran, with no overrides


@pytest.mark.slow
def test_a_colcon_style_install_space_builds_and_is_used(tmp_path):
    """neurok_interfaces as colcon builds an ament_cmake package: configured against an underlay (the
    venv's ROS wheels), installed into its own prefix, then used through PYTHONPATH, LD_LIBRARY_PATH
    and AMENT_PREFIX_PATH as the workspace's setup.bash sets them: its messages serialise there."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    venv = Path(sys.prefix)
    install = tmp_path / "install" / "neurok_interfaces"
    env = {k: v for k, v in os.environ.items() if k not in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "PYTHONPATH",
                                                            "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    env.update(AMENT_PREFIX_PATH=str(venv), PATH=os.pathsep.join([str(venv / "bin"), env.get("PATH", "")]))
    for command in (["cmake", "-S", root / "neurok_interfaces", "-B", tmp_path / "build", "-G", "Unix Makefiles",
                     f"-DCMAKE_INSTALL_PREFIX={install}", f"-DCMAKE_PREFIX_PATH={venv}",
                     f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF"],
                    ["cmake", "--build", tmp_path / "build", "--", "-j2"], ["cmake", "--install", tmp_path / "build"]):
        done = subprocess.run([str(c) for c in command], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site = install / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    assert (install / "share" / "ament_index" / "resource_index" / "packages" / "neurok_interfaces").is_file()
    used = dict(env, PYTHONPATH=str(site), LD_LIBRARY_PATH=str(install / "lib"),
                AMENT_PREFIX_PATH=os.pathsep.join([str(install), str(venv)]))
    probe = ("import neurok_interfaces.msg as m\n"
             "from neurok_interfaces.msg import Articulation, Joint\n"
             "from rclpy.serialization import deserialize_message, serialize_message\n"
             "a = Articulation(part_names=['base', 'lid'], joints=[Joint(name='hinge', lower=-1.0, upper=0.5)])\n"
             "b = deserialize_message(serialize_message(a), Articulation)\n"
             "print(m.__file__, b.part_names, b.joints[0].name, b.joints[0].upper)\n")
    done = subprocess.run([sys.executable, "-c", probe], env=used, capture_output=True, text=True, timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]
    where, *values = done.stdout.split()
    assert Path(where).is_relative_to(install)
    assert " ".join(values) == "['base', 'lid'] hinge 0.5"
