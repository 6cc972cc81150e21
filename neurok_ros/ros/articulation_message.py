"""Articulation (neurok_ros.articulation) <-> neurok_interfaces/msg/Articulation (msg/README.md,
"Typed interfaces").

The message follows the URDF export (neurok_ros.articulation.urdf): part names are the URDF link names
(unique, [A-Za-z0-9_.-]), one revolute or prismatic Joint per joint of the articulation, in its order
(parents before children), then one fixed Joint "<link>_fixed" per other non-root part (welded to the
root, as the URDF welds it). Axis (unit) and origin (a point on the axis, m) are in the mesh frame
(header.frame_id), limits in rad or m relative to the input pose (+-inf: unlimited). vertex_parts
carries the per-vertex labels, so message_to_articulation gives the articulation back.
"""
from __future__ import annotations

import array

import numpy as np
from geometry_msgs.msg import Point, Vector3

from neurok_interfaces.msg import Articulation as ArticulationMsg, Joint as JointMsg
from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.urdf import _link_names as link_names  # the URDF's link names, shared with the export


def _vector(xyz) -> Vector3:
    x, y, z = (float(v) for v in xyz)
    return Vector3(x=x, y=y, z=z)


def _point(xyz) -> Point:
    x, y, z = (float(v) for v in xyz)
    return Point(x=x, y=y, z=z)


def articulation_to_message(articulation: Articulation, frame_id: str = "", stamp=None, urdf: str = "",
                            with_vertex_parts: bool = True) -> ArticulationMsg:
    """The message of `articulation` in frame_id (the mesh frame), stamp a builtin_interfaces/Time (None:
    zero); urdf: the URDF text (write_urdf's file, e.g. ~/object_description), '' when not generated;
    with_vertex_parts: carry the per-vertex part labels (n uint32)."""
    names = link_names(articulation)
    msg = ArticulationMsg(kind=articulation.kind, part_names=names, urdf=str(urdf),
                          readout_seconds=float(articulation.seconds))
    msg.header.frame_id = str(frame_id)
    if stamp is not None:
        msg.header.stamp = stamp
    if with_vertex_parts:
        msg.vertex_parts = array.array("I", np.ascontiguousarray(articulation.labels, dtype=np.uint32).tobytes())
    joints = []
    for joint in articulation.joints:
        if not (0 <= joint.parent < len(names) and 0 <= joint.child < len(names)):
            raise ValueError(f"joint {joint.name!r} joins parts {joint.parent} and {joint.child}; the articulation "
                             f"has {len(names)} parts")
        joints.append(JointMsg(name=joint.name, type=joint.type, parent=names[joint.parent], child=names[joint.child],
                               axis=_vector(joint.axis), origin=_point(joint.origin), lower=float(joint.lower),
                               upper=float(joint.upper), confidence=float(joint.confidence)))
    moved = {joint.child for joint in articulation.joints}
    for part in range(1, len(names)):
        if part not in moved:
            joints.append(JointMsg(name=f"{names[part]}_fixed", type=JointMsg.TYPE_FIXED, parent=names[0],
                                   child=names[part], axis=Vector3(), origin=Point(), lower=0.0, upper=0.0,
                                   confidence=1.0))
    msg.joints = joints
    return msg


def message_to_articulation(msg: ArticulationMsg) -> Articulation:
    """The Articulation of a message with vertex_parts (ValueError without them, or for a joint naming a
    part that part_names lacks, or of an unknown type); fixed joints are dropped (a part without a joint
    is welded to the root)."""
    if len(msg.vertex_parts) == 0:
        raise ValueError("the Articulation message carries no vertex_parts: the parts of the vertices are unknown")
    index = {name: p for p, name in enumerate(msg.part_names)}
    joints = []
    for joint in msg.joints:
        if joint.type == JointMsg.TYPE_FIXED:
            continue
        missing = [name for name in (joint.parent, joint.child) if name not in index]
        if missing:
            raise ValueError(f"joint {joint.name!r}: part {missing[0]!r} is not in part_names")
        joints.append(Joint(joint.name, joint.type, [joint.axis.x, joint.axis.y, joint.axis.z],
                            [joint.origin.x, joint.origin.y, joint.origin.z], joint.lower, joint.upper,
                            index[joint.parent], index[joint.child], joint.confidence))
    labels = np.frombuffer(bytes(msg.vertex_parts), dtype=np.uint32).astype(np.int64)
    return Articulation(labels, joints, msg.kind, list(msg.part_names), float(msg.readout_seconds))
