"""Observed points (a depth camera's cloud of the object) <-> sensor_msgs/PointCloud2 (~/observation).

Reading takes any cloud a camera driver or PCL filter publishes: organised (height > 1) or not,
fields x, y, z (FLOAT32 or FLOAT64, found by name; other fields such as rgb or intensity ignored),
either endianness, padded points and rows. Points with a non-finite coordinate (no-return pixels)
are dropped and counted. Writing gives the plain form: one row, x y z FLOAT32, little-endian.
"""
import array

import numpy as np
from sensor_msgs.msg import PointCloud2, PointField

from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.point_cloud_io import MIN_POINTS

_FORMATS = {PointField.FLOAT32: "f4", PointField.FLOAT64: "f8"}


def cloud_to_points(msg: PointCloud2) -> tuple[np.ndarray, int]:
    """(points (M, 3) float64 in header.frame_id's units, dropped: how many non-finite points were
    left out); NeurokInputError for a cloud without usable x, y, z or with fewer than MIN_POINTS
    finite points."""
    height, width, step, row_step = int(msg.height), int(msg.width), int(msg.point_step), int(msg.row_step)
    by_name = {f.name: f for f in msg.fields}
    endian = ">" if msg.is_bigendian else "<"
    formats, offsets = [], []
    for name in ("x", "y", "z"):
        f = by_name.get(name)
        if f is None:
            raise NeurokInputError(f"observation cloud lacks field '{name}' (has {sorted(by_name)})")
        if f.datatype not in _FORMATS or f.count != 1:
            raise NeurokInputError(f"observation field '{name}' must be one FLOAT32 or FLOAT64, got datatype "
                                   f"{f.datatype} count {f.count}")
        if f.offset + int(_FORMATS[f.datatype][1]) > step:
            raise NeurokInputError(f"observation field '{name}' at offset {f.offset} does not fit point_step {step}")
        formats.append(endian + _FORMATS[f.datatype])
        offsets.append(int(f.offset))
    if row_step < step * width:
        raise NeurokInputError(f"observation row_step {row_step} < point_step {step} x width {width}")
    if len(msg.data) < row_step * height:
        raise NeurokInputError(f"observation cloud holds {len(msg.data)} bytes, expected row_step {row_step} "
                               f"x height {height}")
    raw = np.frombuffer(msg.data, dtype=np.uint8, count=row_step * height).reshape(height, row_step)
    dtype = np.dtype({"names": ["x", "y", "z"], "formats": formats, "offsets": offsets, "itemsize": step})
    records = np.ascontiguousarray(raw[:, :step * width]).view(dtype).reshape(-1)
    points = np.stack([records["x"], records["y"], records["z"]], axis=1).astype(np.float64)
    finite = np.isfinite(points).all(axis=1)
    if int(finite.sum()) < MIN_POINTS:
        raise NeurokInputError(f"observation cloud has {int(finite.sum())} finite points (of {len(points)}); "
                               f"at least {MIN_POINTS} are needed")
    return points[finite], int(len(points) - finite.sum())


def points_to_cloud(points: np.ndarray, frame_id: str, stamp) -> PointCloud2:
    """points (M, 3), metres, frame_id's frame -> an unorganised cloud (height 1), x y z FLOAT32."""
    points = np.asarray(points, dtype="<f4")
    if points.ndim != 2 or points.shape[1] != 3 or len(points) == 0:
        raise NeurokInputError(f"points must have shape (M, 3) with M > 0, got {points.shape}")
    msg = PointCloud2()
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    msg.height, msg.width = 1, len(points)
    msg.fields = [PointField(name=name, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                  for k, name in enumerate("xyz")]
    msg.is_bigendian = False
    msg.point_step = 12
    msg.row_step = 12 * len(points)
    data = array.array("B")
    data.frombytes(np.ascontiguousarray(points).tobytes())
    msg.data = data
    msg.is_dense = bool(np.isfinite(points).all())
    return msg
