"""Contact actions through real ROS 2 pub/sub as trajectory_msgs/MultiDOFJointTrajectory."""
import numpy as np
import pytest
from builtin_interfaces.msg import Time
from trajectory_msgs.msg import MultiDOFJointTrajectory

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import ActionError
from neurok_ros.ros.contact_action import conditions_to_trajectory, trajectory_to_conditions
from neurok_ros.ros.loopback import publish_and_receive
from neurok_ros.ros.qos import ACTION_QOS

pytestmark = pytest.mark.ros


def _drag(C=3, P=4, seed=0):
    rng = np.random.default_rng(seed)
    return ContactConditions(
        positions=rng.normal(size=(C, 3)),
        velocities=rng.normal(size=(C, 3)),
        path_times=np.array([0.1, 0.25, 0.333333333, 2.5])[:P],
        path_positions=rng.normal(size=(P, C, 3)),
    )


def _assert_same(a: ContactConditions, b: ContactConditions):
    for name in ("positions", "velocities", "path_times", "path_positions"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        np.testing.assert_array_equal(x, y, err_msg=name)


def test_drag_action_roundtrips_exactly_through_pubsub(ros_context):
    cond = _drag()
    msg = conditions_to_trajectory(cond, "object_frame", Time(sec=7, nanosec=9))
    assert list(msg.joint_names) == ["contact_0", "contact_1", "contact_2"]
    assert len(msg.points) == 5
    assert (msg.points[0].time_from_start.sec, msg.points[0].time_from_start.nanosec) == (0, 0)
    got = publish_and_receive(MultiDOFJointTrajectory, msg, ACTION_QOS)
    assert got.header.frame_id == "object_frame" and got.header.stamp.sec == 7
    _assert_same(trajectory_to_conditions(got), cond)


def test_push_without_path_roundtrips():
    cond = ContactConditions(positions=[[0.1, 0.2, 0.3]], velocities=[[0.0, 0.0, -1.5]])
    back = trajectory_to_conditions(conditions_to_trajectory(cond, "f", Time()))
    _assert_same(back, cond)
    assert back.path_positions.shape == (0, 1, 3) and not back.has_path


def test_times_are_rounded_to_whole_nanoseconds():
    cond = _drag(C=1, P=2)
    cond.path_times = np.array([1.0 / 3.0, 12.000000000_4])
    back = trajectory_to_conditions(conditions_to_trajectory(cond, "f", Time()))
    np.testing.assert_array_equal(back.path_times, [0.333333333, 12.0])
    _assert_same(ContactConditions(back.positions, back.velocities, cond.path_times,
                                   back.path_positions), cond)


def test_missing_velocities_mean_zero():
    msg = conditions_to_trajectory(_drag(C=2, P=1), "f", Time())
    msg.points[0].velocities = []
    np.testing.assert_array_equal(trajectory_to_conditions(msg).velocities, np.zeros((2, 3)))


@pytest.mark.parametrize("kwargs, words", [
    ({"positions": [[np.nan, 0, 0]], "velocities": [[0, 0, 0]]}, "positions contain NaN or inf"),
    ({"positions": [[0, 0, 0]], "velocities": [[0, np.inf, 0]]}, "velocities contain NaN or inf"),
    ({"positions": np.zeros((0, 3)), "velocities": np.zeros((0, 3))}, "no contacts"),
    ({"positions": [[0, 0, 0]], "velocities": [[0, 0, 0], [1, 1, 1]]}, "must match positions"),
    ({"positions": [[0, 0]], "velocities": [[0, 0]]}, r"shape \(C, 3\)"),
    ({"positions": [[0, 0, 0]], "velocities": [[0, 0, 0]], "path_times": [0.5, 0.5],
      "path_positions": np.zeros((2, 1, 3))}, "strictly increasing"),
    ({"positions": [[0, 0, 0]], "velocities": [[0, 0, 0]], "path_times": [0.5],
      "path_positions": np.zeros((2, 1, 3))}, r"path_positions must have shape \(P=1, C=1, 3\)"),
    ({"positions": [[0, 0, 0]], "velocities": [[0, 0, 0]], "path_times": [0.5],
      "path_positions": [[[0, np.nan, 0]]]}, "path positions contain NaN"),
    ({"positions": [[0, 0, 0]], "velocities": [[0, 0, 0]], "path_times": [-1.0],
      "path_positions": np.zeros((1, 1, 3))}, ">= 0 s"),
    ({"positions": [["a", 0, 0]], "velocities": [[0, 0, 0]]}, "not numeric"),
])
def test_bad_conditions_raise_action_error(kwargs, words):
    with pytest.raises(ActionError, match=words):
        cond = ContactConditions(**kwargs)
        conditions_to_trajectory(cond, "f", Time())


def test_bad_messages_raise_action_error():
    with pytest.raises(ActionError, match="no joints"):
        trajectory_to_conditions(MultiDOFJointTrajectory())

    msg = conditions_to_trajectory(_drag(), "f", Time())
    msg.points = []
    with pytest.raises(ActionError, match="no points"):
        trajectory_to_conditions(msg)

    msg = conditions_to_trajectory(_drag(), "f", Time())
    msg.points[2].transforms = msg.points[2].transforms[:2]
    with pytest.raises(ActionError, match="point 2 has 2 transforms for 3 joints"):
        trajectory_to_conditions(msg)

    msg = conditions_to_trajectory(_drag(), "f", Time())
    msg.points[0].time_from_start.nanosec = 5
    with pytest.raises(ActionError, match="point 0 .* time_from_start 0"):
        trajectory_to_conditions(msg)

    msg = conditions_to_trajectory(_drag(), "f", Time())
    msg.points[0].transforms[1].translation.x = float("nan")
    with pytest.raises(ActionError, match="NaN"):
        trajectory_to_conditions(msg)

    msg = conditions_to_trajectory(_drag(), "f", Time())
    msg.points[3].time_from_start = msg.points[2].time_from_start
    with pytest.raises(ActionError, match="strictly increasing"):
        trajectory_to_conditions(msg)
