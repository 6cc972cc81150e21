"""Vertex trajectories through real ROS 2 pub/sub as organised sensor_msgs/PointCloud2."""
import array

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from sensor_msgs.msg import PointCloud2, PointField

from neurok_ros.errors import NeurokInputError
from neurok_ros.ros.loopback import publish_and_receive
from neurok_ros.ros.qos import TRAJECTORY_QOS
from neurok_ros.ros.trajectory_cloud import cloud_to_frames, frames_to_cloud

pytestmark = pytest.mark.ros


def _trajectory(T=4, N=5, seed=0):
    rng = np.random.default_rng(seed)
    frames = rng.normal(size=(T, N, 3)).astype(np.float32)
    times = (np.arange(T) / 30.0).astype(np.float32)
    return frames, times


def test_large_trajectory_arrives_bit_exact(ros_context):
    frames, times = _trajectory(60, 10000, seed=1)  # 9.6 MB of point data
    stamp = Time(sec=1234, nanosec=567_890_123)
    msg = frames_to_cloud(frames, times, "object_frame", stamp)
    assert (msg.height, msg.width, msg.point_step, msg.row_step) == (60, 10000, 16, 160000)
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        (n, 4 * k, PointField.FLOAT32, 1) for k, n in enumerate("xyzt")]
    assert msg.is_dense and not msg.is_bigendian and len(msg.data) == 60 * 10000 * 16

    got = publish_and_receive(PointCloud2, msg, TRAJECTORY_QOS, timeout_s=20.0)
    assert got.header.frame_id == "object_frame"
    assert (got.header.stamp.sec, got.header.stamp.nanosec) == (1234, 567_890_123)
    out_frames, out_times = cloud_to_frames(got)
    assert out_frames.dtype == np.float32 and out_frames.shape == frames.shape
    np.testing.assert_array_equal(out_frames.view(np.uint32), frames.view(np.uint32))
    np.testing.assert_array_equal(out_times.view(np.uint32), times.view(np.uint32))


def test_local_roundtrip_is_bit_exact_for_awkward_values():
    frames, times = _trajectory()
    frames[0, 0] = [np.float32(1e-45), -0.0, np.finfo(np.float32).max]
    out_frames, out_times = cloud_to_frames(frames_to_cloud(frames, times, "f", Time()))
    np.testing.assert_array_equal(out_frames.view(np.uint32), frames.view(np.uint32))
    np.testing.assert_array_equal(out_times, times)


def test_reordered_and_padded_fields_are_read_by_name():
    frames, times = _trajectory()
    T, N = frames.shape[:2]
    buf = np.zeros((T, N, 6), dtype="<f4")  # layout t, pad, z, y, x, pad: point_step 24
    buf[..., 0] = times[:, None]
    buf[..., 2], buf[..., 3], buf[..., 4] = frames[..., 2], frames[..., 1], frames[..., 0]
    msg = PointCloud2(height=T, width=N, point_step=24, row_step=24 * N, is_dense=True)
    msg.fields = [PointField(name=n, offset=o, datatype=PointField.FLOAT32, count=1)
                  for n, o in (("t", 0), ("z", 8), ("y", 12), ("x", 16))]
    msg.data = array.array("B", buf.tobytes())
    out_frames, out_times = cloud_to_frames(msg)
    np.testing.assert_array_equal(out_frames, frames)
    np.testing.assert_array_equal(out_times, times)


def _bad(msg, words):
    with pytest.raises(NeurokInputError, match=words):
        cloud_to_frames(msg)


def test_malformed_clouds_are_rejected():
    frames, times = _trajectory()
    good = lambda: frames_to_cloud(frames, times, "f", Time())  # noqa: E731

    msg = good()
    msg.fields = msg.fields[:3]
    _bad(msg, "lacks field 't'")

    msg = good()
    msg.fields[1].datatype = PointField.FLOAT64
    _bad(msg, "field 'y' must be one FLOAT32")

    msg = good()
    msg.data = msg.data[:-16]
    _bad(msg, "holds .* bytes, expected")

    msg = good()
    msg.row_step += 4
    _bad(msg, "row_step")

    msg = good()
    msg.fields[3].offset = 14
    _bad(msg, "does not fit point_step")

    msg = good()
    msg.height = 0
    _bad(msg, "empty")

    varying = np.frombuffer(good().data, dtype="<f4").copy().reshape(4, 5, 4)
    varying[2, 3, 3] += 1.0
    msg = good()
    msg.data = array.array("B", varying.tobytes())
    _bad(msg, "'t' varies within a row")


def test_bad_frames_are_rejected():
    frames, times = _trajectory()
    with pytest.raises(NeurokInputError, match=r"shape \(T, N, 3\)"):
        frames_to_cloud(frames[..., :2], times, "f", Time())
    with pytest.raises(NeurokInputError, match=r"times must have shape \(4,\)"):
        frames_to_cloud(frames, times[:3], "f", Time())
    with pytest.raises(NeurokInputError, match="at least one frame"):
        frames_to_cloud(frames[:, :0], times, "f", Time())
