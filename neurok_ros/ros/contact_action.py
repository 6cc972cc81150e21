"""ContactConditions <-> trajectory_msgs/MultiDOFJointTrajectory (the ~/action topic).

One joint per contact, named contact_0 .. contact_{C-1}. Point 0 (time_from_start 0):
transforms[i].translation = contact position (m, mesh frame = header.frame_id) and
velocities[i].linear = initial contact velocity (m/s). Points 1..P: transforms[i].translation =
drag path target of contact i at time_from_start (s). Rotations, angular parts and accelerations
are not used. Positions and velocities round-trip exactly (float64); times travel as
builtin_interfaces/Duration: exact for whole nanoseconds, otherwise rounded to the nearest one.
"""
import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Transform, Twist, Vector3
from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import ActionError

_NS_PER_S = 1_000_000_000


def _duration(seconds: float) -> Duration:
    ns = int(round(float(seconds) * _NS_PER_S))
    return Duration(sec=ns // _NS_PER_S, nanosec=ns % _NS_PER_S)


def _seconds(d: Duration) -> float:
    return (int(d.sec) * _NS_PER_S + int(d.nanosec)) / _NS_PER_S


def _transform(xyz) -> Transform:
    t = Transform()
    t.translation = Vector3(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))
    return t


def _twist(xyz) -> Twist:
    w = Twist()
    w.linear = Vector3(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))
    return w


def _xyz(v: Vector3) -> tuple:
    return (v.x, v.y, v.z)


def conditions_to_trajectory(cond: ContactConditions, frame_id: str,
                             stamp) -> MultiDOFJointTrajectory:
    """Encode validated contact conditions; stamp is a builtin_interfaces/Time."""
    cond.validate()
    msg = MultiDOFJointTrajectory()
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    msg.joint_names = [f"contact_{i}" for i in range(cond.num_contacts)]
    first = MultiDOFJointTrajectoryPoint()
    first.transforms = [_transform(p) for p in cond.positions]
    first.velocities = [_twist(v) for v in cond.velocities]
    first.time_from_start = Duration(sec=0, nanosec=0)
    points = [first]
    for t, targets in zip(cond.path_times, cond.path_positions):
        pt = MultiDOFJointTrajectoryPoint()
        pt.transforms = [_transform(p) for p in targets]
        pt.time_from_start = _duration(t)
        points.append(pt)
    msg.points = points
    return msg


def trajectory_to_conditions(msg: MultiDOFJointTrajectory) -> ContactConditions:
    """Decode and validate; ActionError with a one-line reason when the convention is broken."""
    n = len(msg.joint_names)
    if n == 0:
        raise ActionError("action has no joints: one joint per contact is required")
    if len(msg.points) == 0:
        raise ActionError("action has no points: point 0 must hold the contact positions")
    for k, pt in enumerate(msg.points):
        if len(pt.transforms) != n:
            raise ActionError(
                f"action point {k} has {len(pt.transforms)} transforms for {n} joints")
    first = msg.points[0]
    if _seconds(first.time_from_start) != 0.0:
        raise ActionError(
            f"action point 0 (contact positions) must have time_from_start 0, "
            f"got {_seconds(first.time_from_start)} s")
    if len(first.velocities) not in (0, n):
        raise ActionError(
            f"action point 0 has {len(first.velocities)} velocities for {n} joints "
            f"(0 or {n} allowed)")
    positions = np.array([_xyz(t.translation) for t in first.transforms], dtype=np.float64)
    if first.velocities:
        velocities = np.array([_xyz(w.linear) for w in first.velocities], dtype=np.float64)
    else:
        velocities = np.zeros((n, 3))
    rest = msg.points[1:]
    path_times = np.array([_seconds(pt.time_from_start) for pt in rest], dtype=np.float64)
    path_positions = np.array(
        [[_xyz(t.translation) for t in pt.transforms] for pt in rest], dtype=np.float64
    ).reshape(len(rest), n, 3)
    return ContactConditions(positions, velocities, path_times, path_positions).validate()
