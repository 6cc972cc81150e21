"""TF frames of the object's URDF links (neurok_ros.ros.tf_messages, tf2_msgs/TFMessage on /tf).

The transforms composed along the tree from the mesh frame must carry every part's vertices exactly where the
joints chart's prediction puts them (a real predict_articulated run, anchored and with a free base), must equal
the forward kinematics of the URDF that write_urdf exports (yourdfpy), and must arrive on /tf through a real
publisher and subscriber with the frames RViz's RobotModel looks up. tf2_msgs is built into the venv by
`make setup` (scripts/build_interfaces.py, third_party_interfaces/tf2_msgs) where no ROS installation has it.
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from box_objects import box, chain
from builtin_interfaces.msg import Time

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.urdf import write_urdf
from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.simulation.articulated_chart import predict_articulated
from neurok_ros.simulation.settings import settings_from

try:
    from tf2_msgs.msg import TFMessage
except ImportError as exc:  # pragma: no cover - only without the build
    raise ImportError(f"tf2_msgs is not built into this venv ({exc}); run `make setup`") from exc

from neurok_ros.ros.tf_messages import (  # noqa: E402
    BASE_NAMES,
    TFPlayback,
    free_base_centre,
    joint_columns,
    link_transforms,
    rotation_matrix,
    tf_message,
)

# The type hash of ROS 2's tf2_msgs/msg/TFMessage: what rosbags 0.11.9's independent RIHS01 computation gives for
# the Humble, Jazzy and Kilted definitions, and what the venv's build must give, so that RViz and tf2 see their type.
TF_MESSAGE_HASH = "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087"
NAMES = ["mount", "link one", "link_two", "sleeve", "tag"]
LINKS = ["mount", "link_one", "link_two", "sleeve", "tag"]  # the URDF's link names


def _object():
    """The box chain (mount, link one on a shoulder about x, link two on an elbow about a tilted axis, so that
    the shoulder turns the elbow's axis), a sleeve sliding along link one (prismatic) and a tag welded to the
    mount (no joint: a fixed URDF joint)."""
    V, F, articulation, _ = chain()
    sleeve = box([-0.015, -0.16, 0.485], [0.015, -0.10, 0.515])
    tag = box([0.03, 0.0, 0.48], [0.05, 0.02, 0.5])
    labels = [articulation.labels]
    for label, part in ((3, sleeve), (4, tag)):
        F = np.vstack([F, np.asarray(part.faces) + len(V)])
        V = np.vstack([V, part.vertices])
        labels.append(np.full(len(part.vertices), label))
    shoulder, elbow = articulation.joints
    elbow.axis = np.array([1.0, 0.5, 0.5]) / np.linalg.norm([1.0, 0.5, 0.5])
    slide = Joint("slide", "prismatic", [0, -1, 0], [0, -0.13, 0.5], -0.1, 0.15, 1, 3, 1.0)
    return V, F, Articulation(np.concatenate(labels), [shoulder, elbow, slide], "articulated", NAMES)


def _poses(transforms, frame_id: str) -> dict:
    """{frame: (4, 4) pose in frame_id}, composed along the tree (parents come first)."""
    poses = {frame_id: np.eye(4)}
    for item in transforms:
        assert item.parent in poses, f"{item.parent} comes after its child {item.child}"
        poses[item.child] = poses[item.parent] @ item.matrix()
    return poses


def _assert_reproduces(prediction, V, articulation, q, base=None, centre=None):
    """Every frame: each part's vertices, carried from the link frame by the composed transforms, are the
    predicted ones."""
    origins = np.zeros((articulation.num_parts, 3))
    for joint in articulation.joints:
        origins[joint.child] = joint.origin
    worst = 0.0
    for t in range(len(prediction.times)):
        transforms = link_transforms(articulation, q[t], "object", None if base is None else base[t], centre)
        assert [(x.parent, x.child) for x in transforms] == [("object", "mount"), ("mount", "link_one"),
                                                             ("link_one", "link_two"), ("link_one", "sleeve"),
                                                             ("mount", "tag")]
        poses = _poses(transforms, "object")
        for part, link in enumerate(LINKS):
            mine = articulation.labels == part
            local = V[mine] - origins[part]  # the link's mesh in its frame, as the URDF's OBJ holds it
            moved = local @ poses[link][:3, :3].T + poses[link][:3, 3]
            worst = max(worst, float(np.abs(moved - prediction.vertices[t, mine]).max()))
    assert worst < 2e-6, worst  # float32 vertices of a ~0.6 m object


@pytest.mark.unit
def test_composed_transforms_reproduce_the_predicted_parts():
    V, F, articulation = _object()
    settings = settings_from(duration=0.6, fps=20.0, gravity=(0.0, 0.0, -9.81), damping=0.0, joint_damping=0.0,
                             joint_friction=0.0, mass=1.0)
    push = ContactConditions([[0.0, -0.45, 0.51]], [[0.4, 0.0, 0.0]])  # on link two, sideways
    prediction = predict_articulated(V, F, articulation, push, settings)
    q = prediction.q
    assert q.shape == (13, 3) and np.ptp(q, axis=0).min() > 0.02  # every joint moves
    _assert_reproduces(prediction, V, articulation, q)


@pytest.mark.unit
def test_free_base_transform_reproduces_the_floating_root():
    V, F, articulation = _object()
    settings = settings_from(duration=0.4, fps=20.0, gravity=(0.0, 0.0, -9.81), damping=0.0, joint_damping=0.0,
                             joint_friction=0.0, mass=1.0, free_base=True)
    push = ContactConditions([[0.0, 0.04, 0.5]], [[0.3, 0.0, 0.2]])  # the mount's back: it turns and flies
    prediction = predict_articulated(V, F, articulation, push, settings)
    joints, base = joint_columns(articulation, prediction.summary["joints"])
    assert prediction.summary["joints"][:6] == list(BASE_NAMES) and joints == [6, 7, 8]
    q, base_q = prediction.q[:, joints], prediction.q[:, base]
    assert np.abs(base_q[-1, :3]).max() > 0.05 and np.abs(base_q[-1, 3:]).max() > 0.05  # moved and turned
    _assert_reproduces(prediction, V, articulation, q, base_q, free_base_centre(V, F, articulation.labels))
    with pytest.raises(ValueError, match="base_centre"):
        link_transforms(articulation, q[0], "object", base_q[0])
    with pytest.raises(ValueError, match="root link"):
        link_transforms(articulation, q[0], "mount", base_q[0], np.zeros(3))


@pytest.mark.unit
def test_transforms_are_the_exported_urdf_forward_kinematics(tmp_path):
    import yourdfpy

    V, F, articulation = _object()
    path = write_urdf(tmp_path / "object.urdf", V, F, articulation)
    robot = yourdfpy.URDF.load(str(path), load_meshes=False, build_collision_scene_graph=False,
                               load_collision_meshes=False)
    assert robot.base_link == "mount"
    urdf_joints = {(j.parent, j.child): j for j in robot.robot.joints}
    q = np.array([0.7, -1.1, 0.08])
    transforms = link_transforms(articulation, q, "object")
    assert {(x.parent, x.child) for x in transforms[1:]} == set(urdf_joints)  # one per URDF joint, no other
    robot.update_cfg({"shoulder": q[0], "elbow": q[1], "slide": q[2]})
    poses = _poses(transforms, "object")
    for link in LINKS:
        np.testing.assert_allclose(poses[link], robot.get_transform(link, "mount"), atol=1e-12)
    rest = _poses(link_transforms(articulation, np.zeros(3), "object"), "object")
    for joint in articulation.joints:  # at q = 0 every link frame sits at its joint's origin, world-aligned
        np.testing.assert_allclose(rest[LINKS[joint.child]], np.block([[np.eye(3), joint.origin[:, None]],
                                                                       [np.zeros((1, 3)), 1.0]]), atol=1e-15)
    # the mesh frame named like the root link: no transform to itself
    assert [(x.parent, x.child) for x in link_transforms(articulation, q, "mount")][0] == ("mount", "link_one")
    with pytest.raises(ValueError, match="name of a link"):
        link_transforms(articulation, q, "sleeve")
    with pytest.raises(ValueError, match="3 joints"):
        link_transforms(articulation, q[:2], "object")


@pytest.mark.unit
def test_tf_message_fields():
    V, F, articulation = _object()
    q = np.array([0.3, 0.2, 0.05])
    transforms = link_transforms(articulation, q, "object")
    msg = tf_message(transforms, Time(sec=5, nanosec=6))
    assert isinstance(msg, TFMessage) and len(msg.transforms) == 5
    for item, stamped in zip(transforms, msg.transforms):
        assert (stamped.header.frame_id, stamped.child_frame_id) == (item.parent, item.child)
        assert (stamped.header.stamp.sec, stamped.header.stamp.nanosec) == (5, 6)
        t, r = stamped.transform.translation, stamped.transform.rotation
        np.testing.assert_array_equal([t.x, t.y, t.z], item.translation)
        np.testing.assert_array_equal([r.x, r.y, r.z, r.w], item.rotation)
        assert abs(r.x ** 2 + r.y ** 2 + r.z ** 2 + r.w ** 2 - 1.0) < 1e-12
    shoulder = msg.transforms[1].transform.rotation  # 0.3 rad about +x
    assert (shoulder.x, shoulder.w) == pytest.approx((np.sin(0.15), np.cos(0.15)))
    np.testing.assert_allclose(rotation_matrix(transforms[1].rotation)[1:, 1:],
                               [[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]], atol=1e-15)


class _Recorder:
    def __init__(self):
        self.messages = []

    def publish(self, msg):
        self.messages.append(msg)


@pytest.mark.unit
def test_playback_follows_the_clock_and_the_joint_names():
    V, F, articulation = _object()
    clock = [100.0]
    recorder = _Recorder()
    playback = TFPlayback(recorder, lambda: Time(sec=1), clock=lambda: clock[0])
    playback.tick()
    assert recorder.messages == []  # nothing shown yet
    playback.show_rest(articulation, "object")
    playback.tick()
    rest = recorder.messages[-1]
    assert [t.child_frame_id for t in rest.transforms] == LINKS
    assert all(t.transform.rotation.w == 1.0 for t in rest.transforms)
    names = ["elbow", "extra", "slide", "shoulder"]  # any order, extra columns ignored
    times = np.array([2.0, 2.5, 3.0])
    positions = np.array([[0.0, 9.0, 0.0, 0.0], [0.2, 9.0, 0.01, 0.1], [0.4, 9.0, 0.02, 0.2]])
    playback.show(articulation, "object", names, times, positions, rate=1.0, loop=False)
    for elapsed, row in ((0.0, 0), (0.6, 1), (5.0, 2)):  # the first tick starts the playback clock
        clock[0] = 200.0 + elapsed
        playback.tick()
        got = recorder.messages[-1]
        expected = tf_message(link_transforms(articulation, positions[row, [3, 0, 2]], "object"), Time(sec=1))
        assert got == expected
    assert playback.published == 4
    with pytest.raises(ValueError, match="no values for the joints"):
        playback.show(articulation, "object", ["shoulder"], times, positions[:, :1], 1.0, False)
    with pytest.raises(ValueError, match="name of a link"):
        playback.show_rest(articulation, "link_two")
    assert recorder.messages[-1] == expected  # a refused show keeps the playback
    playback.clear()
    playback.tick()
    assert playback.published == 4


@pytest.mark.ros
def test_tf_arrives_on_slash_tf_with_the_link_frames(ros_context):
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from neurok_ros.ros.loopback import spin_until
    from neurok_ros.ros.qos import TF_QOS

    V, F, articulation = _object()
    suffix = f"{os.getpid()}_{time.monotonic_ns()}"
    pub_node, sub_node = Node(f"neurok_tf_pub_{suffix}"), Node(f"neurok_tf_sub_{suffix}")
    executor = SingleThreadedExecutor()
    executor.add_node(pub_node)
    executor.add_node(sub_node)
    received = []
    lock = threading.Lock()

    def keep(msg):
        with lock:
            received.append(msg)

    try:
        publisher = pub_node.create_publisher(TFMessage, "/tf", TF_QOS)
        playback = TFPlayback(publisher, lambda: pub_node.get_clock().now().to_msg())
        sub_node.create_subscription(TFMessage, "/tf", keep, TF_QOS)
        spin_until(executor, lambda: publisher.get_subscription_count() > 0, 10.0, "the /tf subscriber to match")
        info = sub_node.get_publishers_info_by_topic("/tf")
        assert [i.topic_type for i in info] == ["tf2_msgs/msg/TFMessage"]
        assert str(info[0].topic_type_hash) == TF_MESSAGE_HASH  # the real ROS 2 type: RViz and tf2 match it
        times = np.linspace(0.0, 0.2, 5)
        positions = np.outer(times, [1.0, -2.0, 0.1])
        playback.show(articulation, "object", ["shoulder", "elbow", "slide"], times, positions, 1.0, True)
        pub_node.create_timer(0.02, playback.tick)
        spin_until(executor, lambda: len(received) >= 3, 10.0, "three TFMessages on /tf")
    finally:
        executor.shutdown(timeout_sec=1.0)
        pub_node.destroy_node()
        sub_node.destroy_node()
    for msg in received:
        assert [(t.header.frame_id, t.child_frame_id) for t in msg.transforms] == [
            ("object", "mount"), ("mount", "link_one"), ("link_one", "link_two"), ("link_one", "sleeve"),
            ("mount", "tag")]
        assert msg.transforms[0].header.stamp.sec > 0  # stamped with the node's clock
        slide = msg.transforms[3].transform.translation  # offset (0, -0.13, 0) + q (0, -1, 0)
        assert (slide.x, slide.z) == (0.0, 0.0)
        assert np.abs(positions[:, 2] - (-0.13 - slide.y)).min() < 1e-12  # a frame of the trajectory
