"""The object's URDF links as TF frames: tf2_msgs/TFMessage for /tf, so that RViz's RobotModel display (fed the
URDF from ~/object_description) places every link without robot_state_publisher (msg/README.md, "/tf").

The frames are those of the URDF that neurok_ros/articulation/urdf.py writes: one link per part, named by
`_link_names`; the root link's frame is the mesh frame at the input pose; every link frame is world-aligned at
q = 0 with its origin at its joint's origin; a joint's <origin xyz> is the child frame's origin minus the
parent's (rpy 0) and its <axis> is the joint axis, in the joint (= child) frame. So, as robot_state_publisher
computes it from that URDF, the transform parent link -> child link at joint value q is

    revolute / continuous   translation = origin offset,          rotation = Rot(axis, q)
    prismatic               translation = origin offset + q axis, rotation = identity
    fixed (a part no joint moves, welded to the root)   translation = origin offset (0), rotation = identity

and one more transform, mesh frame -> root link, is the identity (the root is anchored), or with a free base
(the joints chart's `free_base`: six base coordinates base_x, base_y, base_z m, base_yaw, base_pitch,
base_roll rad, first in ~/joint_states) the base's motion: rotation R = Rz(yaw) Ry(pitch) Rx(roll) about the
root's centre of mass c, translation (x, y, z) + c - R c. Composing these along the tree from the mesh frame
to a part's link gives (R_p, t_p); the part's vertex x (mesh frame, input pose) is then at
R_p (x - origin_p) + t_p, which is the joints chart's rigid motion of that part
(neurok_ros/simulation/articulated_chart.py, neurok_ros/dynamics/joint_tree.py).

Every transform goes in one TFMessage per playback tick, on /tf: header.frame_id = the parent frame,
child_frame_id = the child link, header.stamp = the node's clock. Quaternions are (x, y, z, w).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3
from tf2_msgs.msg import TFMessage

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.articulation.urdf import _frame_origins, _link_names  # the URDF's frames, shared with the export
from neurok_ros.ros.joint_messages import TimedPlayback

BASE_NAMES = ("base_x", "base_y", "base_z", "base_yaw", "base_pitch", "base_roll")  # the free base's coordinates


@dataclass(frozen=True)
class LinkTransform:
    """The transform of frame `child` relative to frame `parent`: a point p in child coordinates is at
    R(rotation) p + translation in parent coordinates; translation (3,) m, rotation (4,) unit quaternion
    (x, y, z, w)."""

    parent: str
    child: str
    translation: np.ndarray
    rotation: np.ndarray

    def matrix(self) -> np.ndarray:
        """(4, 4) homogeneous matrix."""
        out = np.eye(4)
        out[:3, :3] = rotation_matrix(self.rotation)
        out[:3, 3] = self.translation
        return out


def axis_angle_quaternion(axis, angle: float) -> np.ndarray:
    """(x, y, z, w) of the rotation by `angle` rad about the unit `axis` (3,)."""
    half = 0.5 * float(angle)
    return np.append(np.sin(half) * np.asarray(axis, np.float64), np.cos(half))


def quaternion_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b of (x, y, z, w) quaternions (the rotation b, then a)."""
    va, wa, vb, wb = a[:3], a[3], b[:3], b[3]
    return np.append(wa * vb + wb * va + np.cross(va, vb), wa * wb - va @ vb)


def rotation_matrix(quaternion: np.ndarray) -> np.ndarray:
    """(3, 3) rotation of a unit (x, y, z, w) quaternion."""
    x, y, z, w = np.asarray(quaternion, np.float64) / np.linalg.norm(quaternion)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def free_base_centre(vertices: np.ndarray, faces: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(3,) m: the root part's centre of mass, the point the free base turns about, as the joints chart
    computes it (uniform density, neurok_ros.simulation.articulated_chart.part_point_masses)."""
    from neurok_ros.simulation.articulated_chart import part_point_masses

    points, masses, part, _ = part_point_masses(np.asarray(vertices, np.float64), np.asarray(faces, np.int64),
                                                np.asarray(labels, np.int64), 1.0)
    root = part == 0
    return (masses[root] @ points[root]) / masses[root].sum()


def _base_transform(base, centre) -> tuple[np.ndarray, np.ndarray]:
    """(translation (3,), quaternion (4,)) of the root link in the mesh frame for the free base's six
    coordinates (x, y, z, yaw, pitch, roll) turning about `centre` (3,)."""
    x, y, z, yaw, pitch, roll = (float(v) for v in base)
    eye = np.eye(3)
    rotation = quaternion_product(quaternion_product(axis_angle_quaternion(eye[2], yaw),
                                                     axis_angle_quaternion(eye[1], pitch)),
                                  axis_angle_quaternion(eye[0], roll))
    centre = np.asarray(centre, np.float64).reshape(3)
    return np.array([x, y, z]) + centre - rotation_matrix(rotation) @ centre, rotation


def link_transforms(articulation: Articulation, q, frame_id: str, base=None, base_centre=None
                    ) -> list[LinkTransform]:
    """Every transform of the object's TF tree at joint values q: first mesh frame `frame_id` -> root link,
    then one per URDF joint (parent link -> child link) in the URDF's order: the articulation's joints, then
    a fixed one per other part. q (J,): rad or m relative to the input pose, in articulation.joints order;
    base: the free base's six coordinates (BASE_NAMES order), with base_centre (3,) m (free_base_centre);
    None: the root is anchored. ValueError when frame_id names a non-root link (a loop), or names the root
    link while the base moves."""
    q = np.asarray(q, np.float64).reshape(-1)
    joints = articulation.joints
    if len(q) != len(joints):
        raise ValueError(f"{len(q)} joint values for the {len(joints)} joints of the articulation")
    origins, parents = _frame_origins(articulation)
    links = _link_names(articulation)
    if frame_id in links[1:]:
        raise ValueError(f"the mesh frame {frame_id!r} is also the name of a link of the object's URDF")
    out = []
    if base is not None:
        if base_centre is None:
            raise ValueError("a free base needs base_centre, the root part's centre of mass")
        if frame_id == links[0]:
            raise ValueError(f"the mesh frame {frame_id!r} is the root link, which a free base moves")
        translation, rotation = _base_transform(base, base_centre)
        out.append(LinkTransform(frame_id, links[0], translation, rotation))
    elif frame_id != links[0]:
        out.append(LinkTransform(frame_id, links[0], np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])))
    for joint, value in zip(joints, q):
        offset = origins[joint.child] - origins[joint.parent]
        if joint.type == "revolute":
            out.append(LinkTransform(links[joint.parent], links[joint.child], offset,
                                     axis_angle_quaternion(joint.axis, value)))
        else:
            out.append(LinkTransform(links[joint.parent], links[joint.child], offset + value * joint.axis,
                                     np.array([0.0, 0.0, 0.0, 1.0])))
    moved = {joint.child for joint in joints}
    for part in range(1, articulation.num_parts):
        if part not in moved:
            out.append(LinkTransform(links[parents[part]], links[part], origins[part] - origins[parents[part]],
                                     np.array([0.0, 0.0, 0.0, 1.0])))
    return out


def tf_message(transforms: list[LinkTransform], stamp) -> TFMessage:
    """TFMessage of the transforms, every header stamped `stamp` (builtin_interfaces/Time)."""
    msg = TFMessage()
    for item in transforms:
        tx, ty, tz = (float(v) for v in item.translation)
        rx, ry, rz, rw = (float(v) for v in item.rotation)
        stamped = TransformStamped(child_frame_id=item.child, transform=Transform(
            translation=Vector3(x=tx, y=ty, z=tz), rotation=Quaternion(x=rx, y=ry, z=rz, w=rw)))
        stamped.header.frame_id = item.parent
        stamped.header.stamp = stamp
        msg.transforms.append(stamped)
    return msg


def joint_columns(articulation: Articulation, names: list) -> tuple[list[int], Optional[list[int]]]:
    """The columns of a joint trajectory with joint `names` (~/joint_trajectory's, the prediction's) that
    hold the articulation's joints (in its order) and the free base's coordinates (None: no free base).
    ValueError naming a joint the names lack."""
    names = [str(n) for n in names]
    missing = [j.name for j in articulation.joints if j.name not in names]
    if missing:
        raise ValueError(f"the joint trajectory has no values for the joints {missing}")
    base = [names.index(n) for n in BASE_NAMES] if all(n in names for n in BASE_NAMES) else None
    return [names.index(j.name) for j in articulation.joints], base


class TFPlayback(TimedPlayback):
    """Plays the latest joint trajectory as TF frames (one TFMessage per tick) on a /tf publisher,
    frame for frame with JointStatePlayback (TimedPlayback); show() and show_rest() by the worker thread."""

    def show(self, articulation: Articulation, frame_id: str, names: list, times: np.ndarray,
             positions: np.ndarray, rate: float, loop: bool, base_centre=None) -> None:
        """Start playing positions (T, len(names)) at times (T,) s (as JointStatePlayback.show) for the
        articulation's URDF in the mesh frame frame_id; with the free base's coordinates among the names,
        base_centre (3,) m (free_base_centre). rate 0: hold the last frame. ValueError (nothing changes) for
        names without the articulation's joints or a frame_id that is a link name."""
        columns, base = joint_columns(articulation, names)
        positions = np.asarray(positions, np.float64).reshape(len(times), len(names))
        item = {"articulation": articulation, "frame_id": str(frame_id), "times": np.asarray(times, float) -
                float(times[0]), "q": positions[:, columns], "base": None if base is None else positions[:, base],
                "centre": base_centre, "rate": float(rate), "loop": bool(loop)}
        self._transforms(item, 0)  # refuse a bad frame or a free base without centre now, not at every tick
        self._play(item)

    def show_rest(self, articulation: Articulation, frame_id: str) -> None:
        """Hold the input pose (every joint at 0, the root at the mesh frame): before any prediction."""
        count = len(articulation.joints)
        self.show(articulation, frame_id, [j.name for j in articulation.joints], np.zeros(1),
                  np.zeros((1, count)), 0.0, False)

    @staticmethod
    def _transforms(item: dict, index: int) -> list[LinkTransform]:
        base = None if item["base"] is None else item["base"][index]
        return link_transforms(item["articulation"], item["q"][index], item["frame_id"], base, item["centre"])

    def _message(self, item: dict, index: int):
        return tf_message(self._transforms(item, index), self._stamp())
