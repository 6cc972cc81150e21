"""Training examples of the articulation head from procedural instances with exact joints.

    example = articulation_example(instance, frame, rng)   # dict of float32 / int64 arrays
      points   (N_in, 3)  surface samples of the frame's mesh, normalised frame (E_cond's input)
      queries  (N_q, 3)   more surface samples, where the targets are
      classes  (N_q,)     0 none (base), 1 revolute, 2 prismatic: the joint that moves the point directly
      axis     (N_q, 3)   that joint's unit axis (0 for the base)
      offset   (N_q, 3)   from the point to the nearest point of the revolute axis line (0 otherwise)
The shape is turned about the up axis (z) and tilted by up to 10 degrees, like the NeuROK model's
training pairs, then normalised (bounding-box centre 0, longest side 1).
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.instance_format import Instance
from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.training.similarity import random_rotation

CLASS_OF_TYPE = {"revolute": 1, "prismatic": 2}


def direct_joints(instance: Instance) -> np.ndarray:
    """(P,) int64: for each part, the joint that moves it directly (the one with the fewest child
    parts that holds it; of joints on the same children, the one that moves them most), -1 for the base."""
    parts = int(instance.part_ids.max()) + 1
    size = float(np.ptp(instance.rest_vertices, axis=0).max())
    best = np.full(parts, -1, dtype=np.int64)
    key = {}
    for j, joint in enumerate(instance.joints):
        reach = (joint["range"][1] - joint["range"][0]) * (size if joint["type"] == "revolute" else 1.0)
        rank = (len(joint["child_parts"]), -reach)
        for part in joint["child_parts"]:
            if part not in key or rank < key[part]:
                key[part], best[part] = rank, j
    return best


def joint_lines(instance: Instance, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """Axes (J, 3) and pivots (J, 3) of the instance's joints as they are in `frame` (object frame)."""
    axes, pivots = [], []
    for joint in instance.joints:
        parent = np.flatnonzero(instance.part_ids == joint["parent_part"])[0]
        R, t = dq.to_rotation_translation(instance.vertex_dual_quaternions[frame, parent].astype(np.float64))
        axis = R @ np.asarray(joint["axis"], dtype=np.float64)
        axes.append(axis / np.linalg.norm(axis))
        pivots.append(R @ np.asarray(joint["pivot"], dtype=np.float64) + t)
    return np.asarray(axes).reshape(-1, 3), np.asarray(pivots).reshape(-1, 3)


def articulation_example(instance: Instance, frame: int, rng: np.random.Generator, input_points: int = 1024,
                         query_points: int = 512, max_tilt_degrees: float = 10.0) -> dict:
    """One example (module docstring) of `instance` in pose `frame`."""
    R = random_rotation(rng, "upright", 2, max_tilt_degrees)
    vertices = instance.frames[frame].astype(np.float64) @ R.T
    low, high = vertices.min(0), vertices.max(0)
    centre, scale = (low + high) / 2, 1.0 / float((high - low).max())
    inputs = sample_surface(vertices, instance.faces, input_points, rng)
    queries = sample_surface(vertices, instance.faces, query_points, rng)
    joint = direct_joints(instance)[instance.part_ids[instance.faces[queries.face_ids, 0]]]
    axes, pivots = joint_lines(instance, frame)
    classes = np.zeros(query_points, dtype=np.int64)
    axis = np.zeros((query_points, 3))
    offset = np.zeros((query_points, 3))
    moving = joint >= 0
    if moving.any():
        types = np.array([CLASS_OF_TYPE[j["type"]] for j in instance.joints])
        classes[moving] = types[joint[moving]]
        axis[moving] = axes[joint[moving]] @ R.T
        to_pivot = pivots[joint[moving]] @ R.T - queries.points[moving]
        along = (to_pivot * axis[moving]).sum(-1, keepdims=True)
        offset[moving] = np.where(classes[moving, None] == 1, (to_pivot - along * axis[moving]) * scale, 0.0)
    return {"points": ((inputs.points - centre) * scale).astype(np.float32),
            "queries": ((queries.points - centre) * scale).astype(np.float32),
            "classes": classes, "axis": axis.astype(np.float32), "offset": offset.astype(np.float32)}
