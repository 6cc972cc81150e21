"""Pose fitting through the readout on real assets: `neurok ik`'s default path scored (docs/articulation.md).

For every object (an instance of `neurok data real`, frame 0 its rest), two pairs: the rest to the
first joint's largest single-joint pose, and the rest to the most-moved pose (largest mean vertex
displacement). The fit sees TARGET_POINTS area-uniform samples of the target's surface (or those of
them one camera sees) and runs through the rest's readout (kinematics/joints_first_ik.py). A pair scores:
  identity_iou  the rest's volumetric IoU with the target (doing nothing)
  iou           the kept fit's
  kept          rest, joints or learned
  joints_right  whether every true joint the pair moves has a readout joint of its type (matched by
                child IoU, as articulation.evaluation does) whose fitted value, its sign taken from the
                axes, is within ANGLE_DEG (revolute, modulo a full turn) or RANGE_SHARE of the true
                joint's range (prismatic) of the true value
  joints_alike  whether each of those joints is right or its part looks as it does at the true
                value: it lies as near its target pose (mean surface distance, looks_alike) as the
                target moved by the tolerance along the true joint would (a wheel's half turn, which
                no observation shows)
  values        per moved true joint: (name, true value, fitted value or None)
"""
from __future__ import annotations

import time

import numpy as np

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.articulation.evaluation import child_matches, true_articulation, true_joints

TARGET_POINTS = 2048
METRIC_SAMPLES = 100_000
ANGLE_DEG = 5.0
RANGE_SHARE = 0.05
GAP_SAMPLES = 2048


def pose_pair_frames(instance) -> list[int]:
    """The target frames of an instance's pairs (module docstring), without repeats."""
    values = instance.joint_values
    single = [f for f in range(1, instance.num_frames) if values[f, 0] != 0 and np.all(values[f, 1:] == 0)]
    rest = instance.frames[0]
    moved = int(np.argmax([np.linalg.norm(frame - rest, axis=1).mean() for frame in instance.frames]))
    first = max(single, key=lambda f: abs(values[f, 0])) if single else moved
    return sorted({first, moved})


def joint_values_right(readout: Articulation, instance, q: np.ndarray | None, target: int,
                       fitted_pose: np.ndarray | None = None) -> tuple[bool, bool, list]:
    """(whether every moved true joint's value came back, whether each did or its part looks as it
    does at the true value (alike), [(name, true, fitted or None)]); q: the fitted values of the
    readout's joints (None: no joint fit), fitted_pose (n, 3): the mesh posed at them."""
    truth, posed_truth = true_joints(instance, 0), true_joints(instance, target)
    match = child_matches(readout, truth)
    names = [joint["name"] for joint in instance.joints]
    right, alike, values = True, True, []
    for a, true in enumerate(truth):
        index = names.index(true.name)
        value = float(instance.joint_values[target, index] - instance.joint_values[0, index])
        if abs(value) < 1e-9:
            continue
        b = match.get(a)
        if b is None or q is None:
            right = alike = False
            values.append((true.name, value, None))
            continue
        joint = readout.joints[b]
        fitted = float(q[b]) * (1.0 if joint.axis @ true.axis >= 0 else -1.0)
        if true.type == "revolute":
            error, tolerance = (fitted - value + np.pi) % (2 * np.pi) - np.pi, np.radians(ANGLE_DEG)
        else:
            low, high = instance.joints[index]["range"]
            error, tolerance = fitted - value, RANGE_SHARE * (high - low)
        this = joint.type == true.type and abs(error) <= tolerance
        right &= this
        alike &= this or (fitted_pose is not None and looks_alike(instance, target, fitted_pose,
                                                                  posed_truth[a], tolerance))
        values.append((true.name, value, fitted))
    return right, alike, values


def looks_alike(instance, target: int, fitted_pose: np.ndarray, joint, tolerance: float) -> bool:
    """Whether a true joint's moved part (joint: a TrueJoint in the target's pose) lies as near its
    target pose in fitted_pose (n, 3) as in the target pose moved by the tolerance along the joint
    (rad or mesh units): the mean distance of each surface's samples from the other surface, both ways."""
    from neurok_ros.articulation.contact_limits import moved_along
    from neurok_ros.geometry.occupancy import surface_distance
    from neurok_ros.geometry.surface_sampling import sample_surface

    faces = instance.faces[np.all(joint.moved[instance.faces], axis=1)].astype(np.int64)
    if not len(faces):
        return False
    posed = instance.frames[target].astype(np.float64)
    off = moved_along(posed, joint, tolerance)

    def one_way(a: np.ndarray, b: np.ndarray) -> float:
        points = sample_surface(a, faces, GAP_SAMPLES, np.random.default_rng(0)).points
        return float(surface_distance(b, faces, points).mean())

    def gap(vertices: np.ndarray) -> float:
        vertices = np.ascontiguousarray(vertices, dtype=np.float64)
        return 0.5 * (one_way(vertices, posed) + one_way(posed, vertices))

    return gap(fitted_pose) <= gap(off)


def pose_fit_rows(model, paths: list, progress: bool = True, readout_config=None, head="auto",
                  joints: str = "readout", partial_view: bool = False) -> list[dict]:
    """One row per pair of every instance file (module docstring). joints: "readout" (the mesh's
    readout, `neurok ik`'s default), "truth" (the instance's own parts and joints,
    articulation.evaluation.true_articulation) or "none" (the learned fit alone); partial_view: the
    fit sees only the target's samples visible from one seeded camera (evaluation.pose_pairs.pair_camera),
    one depth image, and fits the one-sided Chamfer."""
    from dataclasses import replace

    from tqdm import tqdm

    from neurok_ros.articulation.readout import ReadoutConfig, articulate
    from neurok_ros.data.instance_format import load_instance
    from neurok_ros.evaluation.pose_pairs import pair_camera
    from neurok_ros.geometry.metrics import metrics_in_frame
    from neurok_ros.geometry.surface_sampling import sample_surface
    from neurok_ros.geometry.visibility import visible_samples
    from neurok_ros.kinematics.ik_config import IKConfig
    from neurok_ros.kinematics.joints_first_ik import fit_joints_first

    ik = replace(IKConfig(), partial=partial_view)
    rows = []
    for path in tqdm(paths, desc="pose fits", unit="object", disable=not progress):
        instance, name = load_instance(path), str(path).rsplit("/", 1)[-1].removesuffix(".npz")
        rest, faces = instance.frames[0].astype(np.float64), instance.faces
        if joints == "readout":
            readout = articulate(model, rest, faces, readout_config or ReadoutConfig(), head)
        else:
            readout = true_articulation(instance, 0) if joints == "truth" else None
        for target in pose_pair_frames(instance):
            posed = instance.frames[target].astype(np.float64)
            rng = np.random.default_rng(0)
            observed = (visible_samples(posed, faces, pair_camera(posed, 0, name), TARGET_POINTS, rng) if partial_view
                        else sample_surface(posed, faces, TARGET_POINTS, rng).points)
            started = time.perf_counter()
            fit = fit_joints_first(model, rest, faces, observed, readout, ik)
            seconds = time.perf_counter() - started
            transform = fit.ensemble.members[0][0].transform
            joint_fit = (None, None) if fit.joints is None else (fit.joints.q, fit.joints.vertices)
            right, alike, values = (joint_values_right(readout, instance, joint_fit[0], target, joint_fit[1])
                                    if readout is not None else (False, False, []))
            iou = [metrics_in_frame((pose, faces), (posed, faces), transform, METRIC_SAMPLES)["iou"]
                   for pose in (rest, fit.vertices)]
            rows.append({"object": name, "target": target, "identity_iou": iou[0], "iou": iou[1], "kept": fit.kept,
                         "joints_right": bool(right), "joints_alike": bool(alike), "values": values,
                         "seconds": seconds})
    return rows


def pose_fit_table(rows: list[dict]) -> str:
    """One line per object and one for all: pairs, mean IoU of identity and of the fit, pairs below
    identity, pairs with every joint value right (and right or alike), median seconds."""
    lines = ["| object | pairs | IoU (identity) | IoU (fit) | below identity | joint values right | right or alike "
             "| seconds |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in sorted({r["object"] for r in rows}) + ["**all**"]:
        group = [r for r in rows if name == "**all**" or r["object"] == name]
        below = sum(r["iou"] < r["identity_iou"] for r in group)
        lines.append(f"| {name} | {len(group)} | {np.mean([r['identity_iou'] for r in group]):.3f} | "
                     f"{np.mean([r['iou'] for r in group]):.3f} | {below} | "
                     f"{sum(r['joints_right'] for r in group)} | {sum(r['joints_alike'] for r in group)} | "
                     f"{np.median([r['seconds'] for r in group]):.1f} |")
    return "\n".join(lines)
