"""Similarity transforms x -> s R x + shift of point sets and of per-point rigid transforms.

A rigid transform T (x -> R_T x + t_T) seen through a similarity S becomes S T S^-1, which is again
rigid: rotation R R_T R^T and translation s R t_T + shift - R R_T R^T shift. For a unit dual quaternion
(q_r, q_d = 1/2 t q_r) that is: conjugate by the rotation, multiply the dual part by s (it is
linear in t), then conjugate by the translation. Used for normalisation (R = I, s = 1 / longest
side, shift = -s * centre) and augmentation (random R and s).
"""
from __future__ import annotations

import numpy as np

from neurok_ros.geometry import dual_quaternion as dq


def transform_points(points: np.ndarray, rotation: np.ndarray, scale: float, shift: np.ndarray) -> np.ndarray:
    """points (..., 3) -> s R points + shift, same dtype as float64 inputs allow."""
    return scale * points @ np.asarray(rotation).T + np.asarray(shift)


def transform_dual_quaternions(dual_quaternions: np.ndarray, rotation: np.ndarray, scale: float,
                               shift: np.ndarray) -> np.ndarray:
    """(..., 8) unit dual quaternions acting in the old frame -> the same motions in the new frame.

    Closed forms of the three conjugations: by the rotation, rotate the vector parts of q_r and
    q_d by R (w parts unchanged); by the scale, q_d *= s; by the translation c (tau = 1 + eps c/2),
    q_d += (0, c x v_r) with v_r the vector part of q_r.
    """
    R = np.asarray(rotation, np.float64)
    d = np.asarray(dual_quaternions, np.float64)
    real = np.concatenate([d[..., :1], d[..., 1:4] @ R.T], axis=-1)
    dual = scale * np.concatenate([d[..., 4:5], d[..., 5:8] @ R.T], axis=-1)
    dual[..., 1:] += np.cross(np.asarray(shift, np.float64), real[..., 1:])
    return np.concatenate([real, dual], axis=-1)


def axis_angle_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    """(3, 3) rotation by `angle` radians about unit `axis`."""
    k = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


def random_rotation(rng: np.random.Generator, mode: str, up_axis: int = 2,
                    max_tilt_degrees: float = 0.0) -> np.ndarray:
    """(3, 3) random rotation. mode "so3": uniform over all rotations; "upright": uniform turn about
    the up axis, then a tilt of up to max_tilt_degrees about a random horizontal axis; "none": I."""
    if mode == "none":
        return np.eye(3)
    if mode == "so3":
        q = rng.normal(size=4)
        return dq.quaternion_to_matrix(q / np.linalg.norm(q))
    if mode != "upright":
        raise ValueError(f"rotation mode {mode!r} is not one of so3, upright, none")
    up = np.eye(3)[up_axis]
    turn = axis_angle_matrix(up, rng.uniform(0, 2 * np.pi))
    heading = rng.uniform(0, 2 * np.pi)
    horizontal = np.eye(3)[(up_axis + 1) % 3] * np.cos(heading) + np.eye(3)[(up_axis + 2) % 3] * np.sin(heading)
    tilt = axis_angle_matrix(horizontal, np.radians(rng.uniform(0, max_tilt_degrees)))
    return tilt @ turn
