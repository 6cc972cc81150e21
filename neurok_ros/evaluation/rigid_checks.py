"""The learned model against rigid-body physics on articulated test objects.

1. Lid under gravity: a laptop posed with its lid open less than vertical, free motion (gravity, no
   elastic restoring, no damping). The ideal is a rigid lid on a fixed hinge: the pendulum
   I theta'' = tau(theta), tau the torque of gravity about the hinge on the lid turned by theta and I
   its moment of inertia (the same area-uniform masses as the simulation), integrated by scipy; it
   stops where the lid meets the base (theta = -joint angle). The torque grows as the lid comes
   down (a lid at 70 degrees feels a third of the torque it feels at 20), so 1/2 alpha_0 t^2 with the
   starting acceleration alpha_0 falls behind within 0.15 s. Measured: the lid's rotation about the
   hinge (Kabsch fit of the lid's vertices, projected on the hinge axis) against the pendulum until
   the ideal lid closes, how rigid the lid stays and how far the base moves.
2. Door push: a door at rest, its free edge pushed at v perpendicular to the door, no gravity, no
   restoring, no damping. A rigid door turns at the constant rate v / r. Measured: the door's
   rotation about its hinge against (v / r) t, rigidity, frame motion.
Both run predict_motion's learned latent chart (no articulation) with config/simulation.yaml otherwise;
objects with joints use the joints chart by default (docs/physics.md section 5).
"""
from __future__ import annotations

import time

import numpy as np
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from neurok_ros.data.deformable.kabsch_fit import fit_rotations
from neurok_ros.data.instance_format import Instance
from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.geometry.rigid_pieces import vertex_areas
from neurok_ros.kinematics.instance import encode_mesh
from neurok_ros.simulation.predict import predict_motion
from neurok_ros.simulation.settings import settings_from


def rigid_fit(frames: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per frame, the least-squares rigid motion of the masked vertices from frame 0 (frames
    (T, n, 3), metres): rotations (T, 3, 3), translations (T, 3) and the RMS residual (T,) metres."""
    index = np.flatnonzero(mask)[None]  # one neighbourhood: the whole part
    rotations, translations = fit_rotations(frames[0], frames, index, np.ones(index.shape, dtype=bool),
                                            exact_at_vertex=False)
    rotations, translations = rotations[:, 0], translations[:, 0]
    fitted = np.einsum("tab,nb->tna", rotations, frames[0][mask]) + translations[:, None]
    residuals = np.sqrt(((fitted - frames[:, mask]) ** 2).sum(-1).mean(-1))
    return rotations, translations, residuals


def part_motion(frames: np.ndarray, mask: np.ndarray, axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: the rigid rotation of the masked vertices (frames (T, n, 3), relative to frame 0)
    about `axis` (rad, right hand), and the RMS residual of that rigid fit (m)."""
    rotations, _, residuals = rigid_fit(frames, mask)
    return Rotation.from_matrix(rotations).as_rotvec() @ axis, residuals


def first_hinge(inst: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The instance's first joint: (n,) bool of the vertices it moves (its child parts), its axis
    (3,) and a pivot point (3,) on it, mesh frame, metres."""
    joint = inst.joints[0]
    moving = np.isin(np.asarray(inst.part_ids), joint["child_parts"])
    return moving, np.asarray(joint["axis"], dtype=np.float64), np.asarray(joint["pivot"], dtype=np.float64)


def frame_nearest_angle(inst: Instance, angle: float) -> int:
    """Index of the frame whose first joint value is nearest `angle` (rad)."""
    return int(np.argmin(np.abs(np.asarray(inst.joint_values)[:, 0] - angle)))


def part_size(vertices: np.ndarray) -> float:
    """Bounding-box diagonal of (n, 3) vertices, metres."""
    return float(np.linalg.norm(np.ptp(vertices, axis=0)))


def rigid_lid_angles(points: np.ndarray, masses: np.ndarray, axis: np.ndarray, pivot: np.ndarray,
                     gravity: np.ndarray, times: np.ndarray, closed_at: float
                     ) -> tuple[np.ndarray, float | None, float]:
    """A rigid lid released from rest on a fixed hinge: its angle theta(t) (rad, right hand about
    axis) at `times` (s), the time it meets the base (theta = closed_at, rad, reached while falling
    that way; None if not within the times) and its starting angular acceleration (rad/s^2).
    points (n, 3) m and masses (n,) kg: the lid's; gravity (3,) m/s^2. After it meets the base it
    stays there (an inelastic stop)."""
    r = points - pivot
    r_perp = r - np.outer(r @ axis, axis)
    inertia = float((masses * (r_perp ** 2).sum(1)).sum())
    weight = masses[:, None] * gravity

    def torque(theta: float) -> float:
        turned = r @ Rotation.from_rotvec(theta * axis).as_matrix().T
        return float((np.cross(turned, weight) @ axis).sum())

    def meets_base(_, y):
        return y[0] - closed_at
    meets_base.terminal = True
    span = float(times[-1])
    falls_shut = np.sign(torque(0.0)) == np.sign(closed_at) and closed_at != 0.0
    solution = solve_ivp(lambda _, y: [y[1], torque(y[0]) / inertia], (0.0, span), [0.0, 0.0],
                         events=meets_base if falls_shut else None, dense_output=True, rtol=1e-10, atol=1e-12)
    closing = float(solution.t_events[0][0]) if falls_shut and len(solution.t_events[0]) else None
    end = closing if closing is not None else span
    angles = solution.sol(np.minimum(times, end))[0]
    if closing is not None:
        angles = np.where(times >= closing, closed_at, angles)
    return angles, closing, torque(0.0) / inertia


def lid_check(model, inst: Instance, name: str = "", open_angle: float = 1.1, duration: float = 0.3,
              pin_fixed: bool = False, settings: dict | None = None) -> dict:
    """Check 1 of the module docstring on an articulated laptop-like instance (its first joint the
    lid hinge, posed at the frame whose angle is nearest open_angle rad). pin_fixed: hold the base
    in place (predict_motion's pinned_vertices), as the rigid ideal's table does. settings: other
    simulation settings (e.g. {"chart": "bank"}); the check's own (no spring, no damping) win."""
    lid, axis, pivot = first_hinge(inst)  # the base (the hinge's parent) does not move in the dataset
    pose = frame_nearest_angle(inst, open_angle)
    V = np.asarray(inst.frames[pose], dtype=np.float64)
    F = np.asarray(inst.faces, dtype=np.int64)
    settings = settings_from(settings, stiffness=0.0, damping=0.0, duration=duration, fps=60.0)
    instance = encode_mesh(model, V, F)
    started = time.perf_counter()
    prediction = predict_motion(instance, None, settings, pinned_vertices=~lid if pin_fixed else None)
    seconds = time.perf_counter() - started
    angles, residuals = part_motion(prediction.vertices.astype(np.float64), lid, axis)
    # rigid ideal: same mass per area as the simulation (total mass over the whole surface)
    w = vertex_areas(V, F)
    masses = settings.mass * w / w.sum()
    joint_angle = float(inst.joint_values[pose][0])
    times = prediction.times
    ideal, closing, alpha = rigid_lid_angles(V[lid], masses[lid], axis, pivot, np.asarray(settings.gravity), times,
                                             -joint_angle)
    before = times <= (closing if closing is not None else times[-1]) + 1e-9  # the ideal lid still falling
    compare = int(np.flatnonzero(before)[-1])
    base_motion = np.linalg.norm(prediction.vertices[:, ~lid] - prediction.vertices[:1, ~lid], axis=-1).max()
    early = times <= 0.1 + 1e-9
    return {"file": name, "joint_angle_rad": joint_angle, "vertices": len(V),
            "alpha_ideal_rad_s2": alpha, "times": times.tolist(), "angle_learned": angles.tolist(),
            "angle_ideal": ideal.tolist(), "same_direction_at_0.1s": bool(np.sign(angles[early][-1]) == np.sign(alpha)),
            "closing_time_s": closing, "compared_until_s": float(times[compare]),
            "angle_learned_at_compare_deg": float(np.degrees(angles[compare])),
            "angle_ideal_at_compare_deg": float(np.degrees(ideal[compare])),
            "angle_error_rms_deg": float(np.degrees(np.sqrt(np.mean((angles[before] - ideal[before]) ** 2)))),
            "angle_learned_at_end_deg": float(np.degrees(angles[-1])),
            "angle_ideal_at_end_deg": float(np.degrees(ideal[-1])),
            "lid_kabsch_rms_max_m": float(residuals.max()), "base_motion_max_m": float(base_motion),
            "lid_size_m": part_size(V[lid]), "pinned": pin_fixed, "seconds": seconds}


def door_check(model, inst: Instance, name: str = "", speed: float = 0.3, duration: float = 0.5,
               pin_fixed: bool = False, settings: dict | None = None) -> dict:
    """Check 2 of the module docstring on an articulated door-like instance (its first joint the
    hinge), pushed at the free edge at mid height. pin_fixed: hold the frame in place, as a wall
    does. settings: as lid_check's."""
    door, axis, pivot = first_hinge(inst)  # the frame is the hinge's fixed parent
    V = np.asarray(inst.rest_vertices, dtype=np.float64)
    F = np.asarray(inst.faces, dtype=np.int64)
    r = V - pivot
    r_perp = r - np.outer(r @ axis, axis)
    height = r @ axis
    # the free edge at mid height: the door vertex farthest from the axis among the middle third
    middle = door & (np.abs(height - np.median(height[door])) <= np.ptp(height[door]) / 6)
    index = np.flatnonzero(middle)[np.argmax(np.linalg.norm(r_perp[middle], axis=1))]
    radius = float(np.linalg.norm(r_perp[index]))
    direction = np.cross(axis, r_perp[index]) / radius  # opening: positive rotation about the axis
    settings = settings_from(settings, stiffness=0.0, damping=0.0, gravity=(0.0, 0.0, 0.0), duration=duration,
                             fps=30.0)
    instance = encode_mesh(model, V, F)
    started = time.perf_counter()
    prediction = predict_motion(instance, ContactConditions([V[index]], [speed * direction]), settings,
                                pinned_vertices=~door if pin_fixed else None)
    seconds = time.perf_counter() - started
    angles, residuals = part_motion(prediction.vertices.astype(np.float64), door, axis)
    ideal = speed / radius * prediction.times
    frame_motion = np.linalg.norm(prediction.vertices[:, ~door] - prediction.vertices[:1, ~door], axis=-1).max()
    return {"file": name, "vertices": len(V), "radius_m": radius, "speed_m_s": speed,
            "times": prediction.times.tolist(), "angle_learned": angles.tolist(), "angle_ideal": ideal.tolist(),
            "angle_error_rms_deg": float(np.degrees(np.sqrt(np.mean((angles - ideal) ** 2)))),
            "angle_learned_at_end_deg": float(np.degrees(angles[-1])),
            "angle_ideal_at_end_deg": float(np.degrees(ideal[-1])),
            "door_kabsch_rms_max_m": float(residuals.max()), "frame_motion_max_m": float(frame_motion),
            "contact_velocity_residual": prediction.summary["contact_velocity_residual"],
            "door_width_m": float(radius), "pinned": pin_fixed, "seconds": seconds}
