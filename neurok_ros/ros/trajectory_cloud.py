"""Vertex trajectory (T frames x N vertices) <-> organised sensor_msgs/PointCloud2 (~/trajectory).

Row r is frame r, column j is input vertex j (input order). Fields x, y, z (m, mesh frame =
header.frame_id) and t (s, the frame's time from the start of the prediction), all FLOAT32 at
offsets 0, 4, 8, 12; point_step 16, row_step 16 N, little-endian, is_dense True. Bit-exact.
"""
import array

import numpy as np
from sensor_msgs.msg import PointCloud2, PointField

from neurok_ros.errors import NeurokInputError

FIELD_NAMES = ("x", "y", "z", "t")
POINT_STEP = 16


def frames_to_cloud(frames: np.ndarray, times: np.ndarray, frame_id: str, stamp) -> PointCloud2:
    """frames (T, N, 3) positions in metres, times (T,) seconds; stamp a builtin_interfaces/Time."""
    frames = np.asarray(frames)
    times = np.asarray(times).reshape(-1)
    if frames.ndim != 3 or frames.shape[2] != 3:
        raise NeurokInputError(f"frames must have shape (T, N, 3), got {frames.shape}")
    n_t, n_v = frames.shape[:2]
    if n_t == 0 or n_v == 0:
        raise NeurokInputError(
            f"frames must hold at least one frame and one vertex, got {frames.shape}")
    if times.shape != (n_t,):
        raise NeurokInputError(f"times must have shape ({n_t},), got {times.shape}")
    buf = np.empty((n_t, n_v, 4), dtype="<f4")
    buf[:, :, :3] = frames
    buf[:, :, 3] = times[:, None]

    msg = PointCloud2()
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    msg.height = n_t
    msg.width = n_v
    msg.fields = [
        PointField(name=name, offset=4 * k, datatype=PointField.FLOAT32, count=1)
        for k, name in enumerate(FIELD_NAMES)
    ]
    msg.is_bigendian = False
    msg.point_step = POINT_STEP
    msg.row_step = POINT_STEP * n_v
    data = array.array("B")
    data.frombytes(memoryview(buf).cast("B"))
    msg.data = data
    msg.is_dense = True
    return msg


def cloud_to_frames(msg: PointCloud2) -> tuple:
    """Return (frames (T, N, 3) float32, times (T,) float32); fields are found by name."""
    n_t, n_v = int(msg.height), int(msg.width)
    if n_t == 0 or n_v == 0:
        raise NeurokInputError(f"trajectory cloud is empty (height {n_t}, width {n_v})")
    step = int(msg.point_step)
    by_name = {f.name: f for f in msg.fields}
    endian = ">" if msg.is_bigendian else "<"
    offsets = []
    for name in FIELD_NAMES:
        f = by_name.get(name)
        if f is None:
            raise NeurokInputError(
                f"trajectory cloud lacks field '{name}' (has {sorted(by_name)}); "
                "x, y, z, t are required")
        if f.datatype != PointField.FLOAT32 or f.count != 1:
            raise NeurokInputError(
                f"trajectory cloud field '{name}' must be one FLOAT32, "
                f"got datatype {f.datatype} count {f.count}")
        if f.offset + 4 > step:
            raise NeurokInputError(
                f"trajectory cloud field '{name}' at offset {f.offset} "
                f"does not fit point_step {step}")
        offsets.append(int(f.offset))
    if msg.row_step != step * n_v:
        raise NeurokInputError(
            f"trajectory cloud row_step {msg.row_step} != point_step {step} x width {n_v}")
    if len(msg.data) != msg.row_step * n_t:
        raise NeurokInputError(
            f"trajectory cloud holds {len(msg.data)} bytes, "
            f"expected row_step {msg.row_step} x height {n_t}")
    dtype = np.dtype({
        "names": list(FIELD_NAMES),
        "formats": [endian + "f4"] * 4,
        "offsets": offsets,
        "itemsize": step,
    })
    rec = np.frombuffer(msg.data, dtype=dtype).reshape(n_t, n_v)
    frames = np.empty((n_t, n_v, 3), dtype=np.float32)
    frames[..., 0] = rec["x"]
    frames[..., 1] = rec["y"]
    frames[..., 2] = rec["z"]
    t = rec["t"].astype(np.float32)
    if not np.array_equal(t, np.broadcast_to(t[:, :1], t.shape), equal_nan=True):
        raise NeurokInputError(
            "trajectory cloud field 't' varies within a row; one time per frame expected")
    return frames, t[:, 0].copy()

