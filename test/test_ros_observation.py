"""~/observation: a depth camera's cloud of the object sets the state the next action starts from.

Message tests read clouds laid out as camera drivers publish them (organised, padded, rgb, float64,
big-endian). The node test runs the real model in a real rclpy node: a one-sided view of the laptop
with its lid turned moves the state, an action then starts from the fitted shape, bad clouds are
refused with a reason and keep the state, a view of the mesh as received goes back to it; by default
(observation_joints) the readout's hinge angle is fitted first, and without it the learned fit alone.
"""
import json

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import PointCloud2, PointField
from test_ros_node import FAST_ARGS, Harness, _small_mesh, _stamp, _top_contact

from neurok_ros.benchmarks.example_meshes import lid_turned
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.visibility import visible_samples
from neurok_ros.kinematics.scan_fit import surface_distances
from neurok_ros.ros.mesh_marker import marker_to_mesh
from neurok_ros.ros.observation_cloud import cloud_to_points, points_to_cloud
from neurok_ros.ros.qos import OBSERVATION_QOS
from neurok_ros.ros.trajectory_cloud import cloud_to_frames

pytestmark = [pytest.mark.ros, pytest.mark.model, pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]


def _camera_cloud(points, kind: str, big_endian: bool = False, pad: int = 0) -> PointCloud2:
    """An organised 2-row cloud: x y z of `kind` ("f4"/"f8"), then a 4-byte rgb, `pad` bytes at
    each row's end, as a driver lays it out."""
    size = np.dtype(kind).itemsize
    layout = np.dtype({"names": ["x", "y", "z", "rgb"], "formats": [kind] * 3 + ["u4"],
                       "offsets": [0, size, 2 * size, 3 * size], "itemsize": 3 * size + 4})
    layout = layout.newbyteorder(">" if big_endian else "<")
    rows = np.zeros((2, len(points) // 2), dtype=layout)
    for axis, name in enumerate("xyz"):
        rows[name] = points[:, axis].reshape(2, -1)
    rows["rgb"] = 0xFF00FF
    raw = np.concatenate([rows.view(np.uint8).reshape(2, -1), np.full((2, pad), 7, np.uint8)], axis=1)
    datatype = PointField.FLOAT32 if kind == "f4" else PointField.FLOAT64
    msg = PointCloud2(height=2, width=len(points) // 2, is_bigendian=big_endian, point_step=layout.itemsize,
                      row_step=raw.shape[1], is_dense=False)
    msg.fields = [PointField(name=n, offset=k * size, datatype=datatype, count=1) for k, n in enumerate("xyz")]
    msg.fields.append(PointField(name="rgb", offset=3 * size, datatype=PointField.UINT32, count=1))
    msg.data = raw.tobytes()
    return msg


@pytest.mark.parametrize("kind, big_endian, pad", [("f4", False, 0), ("f8", False, 8), ("f4", True, 4)])
def test_camera_clouds_give_their_finite_points(kind, big_endian, pad):
    points = np.random.default_rng(1).normal(size=(40, 3))
    points[[3, 17]] = np.nan  # no-return pixels
    read, dropped = cloud_to_points(_camera_cloud(points, kind, big_endian, pad))
    finite = points[np.isfinite(points).all(axis=1)]
    assert dropped == 2 and read.shape == finite.shape
    assert np.allclose(read, finite, atol=1e-6 if kind == "f4" else 0)


def test_written_clouds_read_back_exactly():
    points = np.random.default_rng(2).uniform(-1, 1, size=(300, 3)).astype(np.float32)
    msg = points_to_cloud(points, "object", _stamp())
    read, dropped = cloud_to_points(msg)
    assert dropped == 0 and np.array_equal(read, points.astype(np.float64)) and msg.header.frame_id == "object"


def test_unusable_clouds_are_refused_with_a_reason():
    good = points_to_cloud(np.zeros((30, 3)), "object", _stamp())
    no_z = points_to_cloud(np.zeros((30, 3)), "object", _stamp())
    no_z.fields = no_z.fields[:2]
    integer = points_to_cloud(np.zeros((30, 3)), "object", _stamp())
    integer.fields[1].datatype = PointField.INT32
    short = points_to_cloud(np.zeros((30, 3)), "object", _stamp())
    short.data = bytes(good.data)[:100]
    few = points_to_cloud(np.full((30, 3), np.nan), "object", _stamp())
    for msg, words in ((no_z, "lacks field 'z'"), (integer, "FLOAT32 or FLOAT64"), (short, "holds 100 bytes"),
                       (few, "0 finite points")):
        with pytest.raises(NeurokInputError, match=words):
            cloud_to_points(msg)


def _observation_event(harness, publisher, points, frame="object"):
    stamp = _stamp()
    publisher.publish(points_to_cloud(points, frame, stamp))
    return harness.input_event(stamp, "~/observation", timeout=180)


def test_an_observation_sets_the_state_actions_start_from(ros_context):
    from neurok_ros.ros.prediction_backend import NeurokBackend

    V, F = _small_mesh()
    h = Harness(NeurokBackend.load("", "cpu"))
    try:
        observe = h.probe.create_publisher(PointCloud2, f"{h.fqn}/observation", OBSERVATION_QOS)
        h.spin_until(lambda: observe.get_subscription_count(), 10, "the observation subscription")
        early = _observation_event(h, observe, V[:50])
        assert early.level == DiagnosticStatus.ERROR and "before any mesh" in early.message
        h.send_good_mesh(V, F)
        received_key = h.state()["mesh_key"]

        target = lid_turned(V, 0.35, F)
        camera = V.mean(axis=0) + [0.0, -2.0, 1.0]  # in front of the laptop, above it
        view = visible_samples(target, F, camera, 3000, np.random.default_rng(6))
        status = _observation_event(h, observe, view)
        assert status.level == DiagnosticStatus.OK and "moved from the received mesh" in status.message, status.message
        state = h.state()
        # by default the readout's hinge is fitted first: its angle is the lid's turn
        assert h.node.get_parameter("observation_joints").value and "joints joint_1" in status.message, status.message
        name, angle = state["observation_joints"].split()
        assert state["observation_kept"] in ("joints", "learned") and abs(abs(float(angle)) - 0.35) < 0.05, state
        assert state["observation_moved"] == "true" and state["mesh_key"] != received_key
        assert int(state["observation_support_points"]) > 0  # the base's bottom edge, within the table band
        assert float(state["observation_residual_p90_m"]) < 0.5 * float(state["observation_received_residual_p90_m"])
        fitted = marker_to_mesh(h.meshes[-1]).vertices  # ~/trajectory_mesh: the state's vertices
        lid = np.linalg.norm(target - V, axis=1) > 1e-6  # the turned lid's vertices, seen side and hidden side
        to_fit, to_received = surface_distances(target[lid], fitted, F)[0], surface_distances(target[lid], V, F)[0]
        assert fitted.shape == V.shape and to_fit < 0.4 * to_received, (to_fit, to_received)  # seeds 6-9: 0.14-0.17

        stamp = h.send_action(_top_contact(fitted), [0.0, 0.0, -0.2])
        frames, _ = cloud_to_frames(h.cloud_for(stamp, timeout=120))
        assert np.abs(frames[0] - fitted).max() < 1e-4  # the prediction starts from the observed state

        far, wrong_frame = view + [0.0, 0.0, 25.0], view
        for points, frame, words in ((far, "object", "in the mesh's frame and units"),
                                     (wrong_frame, "camera", "is not the mesh frame")):
            refused = _observation_event(h, observe, points, frame)
            assert refused.level == DiagnosticStatus.ERROR and words in refused.message, refused.message
        assert h.state()["mesh_key"] == state["mesh_key"]  # the observed state stays

        still = visible_samples(V, F, camera, 3000, np.random.default_rng(7))
        back = _observation_event(h, observe, still)
        assert back.level == DiagnosticStatus.OK and "the received mesh as it is" in back.message, back.message
        h.spin_until(lambda: h.state().get("mesh_key") == received_key
                     and np.allclose(marker_to_mesh(h.meshes[-1]).vertices, V, atol=1e-6), 10,
                     "the received mesh back in use and on ~/trajectory_mesh")

        # without observation_joints, the learned fit alone: no joint values
        h.node.set_parameters([Parameter("observation_joints", value=False)])
        alone = _observation_event(h, observe, view)
        assert alone.level == DiagnosticStatus.OK and "joints" not in alone.message, alone.message
        assert h.state()["observation_kept"] == "learned"
        fitted = marker_to_mesh(h.meshes[-1]).vertices
        assert surface_distances(target[lid], fitted, F)[0] < 0.4 * to_received
    finally:
        h.close()


def test_request_command_sends_a_scan_before_the_push(ros_context, tmp_path, capsys):
    """`neurok request --scan`: mesh, then the scan on ~/observation, then the push, through a node
    spawned in the process; the trajectory starts from the fitted state, not from the mesh. The push is
    on the base, which the turned lid leaves where it was."""
    from neurok_ros.cli import main
    from neurok_ros.geometry.mesh_io import save_mesh

    V, F = _small_mesh()
    save_mesh(tmp_path / "laptop.ply", V, F)
    target = lid_turned(V, 0.35, F)
    np.save(tmp_path / "view.npy", visible_samples(target, F, V.mean(axis=0) + [0.0, -2.0, 1.0], 3000,
                                                   np.random.default_rng(6)))
    out = tmp_path / "traj.npz"
    rc = main(["request", str(tmp_path / "laptop.ply"), "--scan", str(tmp_path / "view.npy"),
               "--contact", *map(str, V[np.argmin(V[:, 2])]), "--velocity", "0", "0.2", "0", "--out", str(out),
               "--spawn-node", "--json", *FAST_ARGS])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["observation_moved"] is True and summary["observation_residual_p90_m"] < 0.01
    data = np.load(out)
    assert np.abs(data["frames"][0] - data["vertices"]).max() < 1e-4  # frame 0 is the fitted state ...
    assert np.abs(data["vertices"] - V).max() > 0.01  # ... and the lid is not where the mesh had it
