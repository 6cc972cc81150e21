"""A push along each true joint's motion, simulated through the readout (docs/physics.md).

For every true joint of an object: its moving part is pushed at PUSH_SPEED m/s along the joint's own
motion (at the moving vertex farthest from a revolute axis, tangent to its circle; anywhere on a
prismatic part, along the rail), for PUSH_SECONDS with no gravity and the default settings
otherwise, by `neurok simulate`'s default path: the readout's parts and joints in the joints chart
(simulation/articulated_chart.py). The push goes the way the true joint has more room from the
pose shown. A push succeeds when
  moves      the true moving vertices move at least STILL of the bounding-box diagonal;
  axis       their best rigid motion turns about (revolute) or slides along (prismatic) an axis
             within AXIS_DEG of the true one (a revolute motion must turn by at least 2 degrees,
             a prismatic one by at most AXIS_DEG);
  rigid      that rigid fit leaves at most RIGID of the diagonal (largest vertex residual);
  still      every other vertex moves at most STILL of the diagonal.
A readout with no joints fails every push.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.articulation.articulation import Articulation

PUSH_SPEED = 0.3  # m/s
PUSH_SECONDS = 1.0
AXIS_DEG = 15.0
RIGID = 0.01  # of the bounding-box diagonal
STILL = 0.01  # of the bounding-box diagonal
MIN_TURN_DEG = 2.0


def push_velocity(truth, vertices: np.ndarray, direction: float) -> tuple[np.ndarray, np.ndarray]:
    """(contact (3,), velocity (3,) m/s): where and how the true joint's part is pushed; truth: an
    articulation.evaluation.TrueJoint; direction +1 or -1 along its joint coordinate."""
    moving = vertices[truth.moved]
    if truth.type == "revolute":
        offset = moving - truth.origin
        arm = offset - np.outer(offset @ truth.axis, truth.axis)
        i = int(np.argmax(np.linalg.norm(arm, axis=1)))
        tangent = np.cross(truth.axis, arm[i])
        return moving[i], direction * PUSH_SPEED * tangent / np.linalg.norm(tangent)
    i = int(np.argmax(moving @ (direction * truth.axis)))  # the face the push leads with
    return moving[i], direction * PUSH_SPEED * truth.axis


def rigid_motion(rest: np.ndarray, moved: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """R (3, 3), t (3,) of the best rigid motion rest -> moved (n, 3) each, and its largest residual."""
    from neurok_ros.articulation.rigid_segmentation import kabsch

    R, t = kabsch(rest, moved)
    return R, t, float(np.linalg.norm(rest @ R.T + t - moved, axis=1).max())


def motion_axis(R: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """(turn in degrees, unit axis): the rotation axis of R (the direction it leaves in place, defined
    up to a half turn and beyond, where R's antisymmetric part vanishes), or t's direction when R
    barely turns."""
    angle = float(np.degrees(np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0))))
    if angle >= MIN_TURN_DEG:
        axis = np.linalg.svd(R - np.eye(3))[2][-1]
    else:
        axis = t
    norm = float(np.linalg.norm(axis))
    return angle, axis / norm if norm > 0 else np.zeros(3)


def push_check(readout: Articulation, truth, vertices: np.ndarray, faces: np.ndarray,
               direction: float) -> dict:
    """Push the true joint's part through the readout and score the motion (module docstring)."""
    from neurok_ros.dynamics.contact_conditions import ContactConditions
    from neurok_ros.simulation.articulated_chart import predict_articulated
    from neurok_ros.simulation.settings import settings_from

    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    row = {"push_moves": False, "push_axis_deg": 90.0, "push_rigid": False, "push_still": False,
           "push_success": False}
    if not readout.joints:
        return row
    contact, velocity = push_velocity(truth, vertices, direction)
    settings = settings_from(gravity=(0.0, 0.0, 0.0), duration=PUSH_SECONDS, fps=10.0)
    prediction = predict_articulated(vertices, faces, readout, ContactConditions(contact[None], velocity[None]),
                                     settings)
    final = prediction.vertices[-1].astype(np.float64)
    moved = truth.moved
    travel = float(np.linalg.norm(final[moved] - vertices[moved], axis=1).max()) / diagonal
    R, t, residual = rigid_motion(vertices[moved], final[moved])
    turn, axis = motion_axis(R, t)
    off = float(np.degrees(np.arccos(np.clip(abs(axis @ truth.axis), 0.0, 1.0))))
    kind_right = turn >= MIN_TURN_DEG if truth.type == "revolute" else turn <= AXIS_DEG
    others = float(np.linalg.norm(final[~moved] - vertices[~moved], axis=1).max()) / diagonal if (~moved).any() else 0
    row.update(push_moves=travel >= STILL, push_axis_deg=off if kind_right else 90.0,
               push_rigid=residual / diagonal <= RIGID, push_still=others <= STILL)
    row["push_success"] = bool(row["push_moves"] and row["push_axis_deg"] <= AXIS_DEG and row["push_rigid"]
                               and row["push_still"])
    return row
