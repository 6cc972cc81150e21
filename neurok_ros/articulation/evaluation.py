"""Scoring an articulation readout against an instance's true parts and joints (GEOPARD / PARIS
protocol, docs/articulation.md).

For each true joint, in the pose the readout saw:
  type       whether the matched predicted joint has the same type
  axis_deg   angle between the two axis lines, in [0, 90] degrees
  pivot      distance of the true axis point from the predicted axis line over the bounding-box
             diagonal (revolute joints only; None for prismatic)
  child_iou  IoU of the vertices the two joints move (the child part and its descendants)
True joints are matched one to one with predicted joints by child IoU (Hungarian). An unmatched true
joint scores as a miss (type wrong, 90 degrees, pivot 1, IoU 0). True joints that move the same
child (a bottle cap that screws: a twist and a lift) count once, by the one that moves it most.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.data.instance_format import Instance
from neurok_ros.geometry import dual_quaternion as dq


@dataclass
class TrueJoint:
    """A true joint in the pose of one frame: name, type, axis (3,), origin (3,), moved (n,) bool;
    room: +1 or -1, the way along the joint coordinate with more of its range left from that pose."""

    name: str
    type: str
    axis: np.ndarray
    origin: np.ndarray
    moved: np.ndarray
    room: float = 1.0


def joints_in_frame(instance: Instance, frame: int) -> list[tuple[int, np.ndarray, np.ndarray, float]]:
    """(index, axis (3,) unit, origin (3,), value) of the instance's joints as they are in `frame` (a
    chain's inner joints move with their parent), one per moved child set: the joint that reaches
    farthest (a bottle cap's twist or lift), in the order the child sets first appear."""
    radius = np.ptp(instance.rest_vertices, axis=0).max()
    kept = {}
    for index, joint in enumerate(instance.joints):
        lo, hi = joint["range"]
        reach = (hi - lo) * (radius if joint["type"] == "revolute" else 1.0)
        key = frozenset(joint["child_parts"])
        if key not in kept or kept[key][0] < reach:
            kept[key] = (reach, index)
    out = []
    for _, index in kept.values():
        joint = instance.joints[index]
        parent = np.flatnonzero(instance.part_ids == joint["parent_part"])
        R, t = dq.to_rotation_translation(instance.vertex_dual_quaternions[frame, parent[0]].astype(np.float64))
        axis = R @ np.asarray(joint["axis"], dtype=np.float64)
        origin = R @ np.asarray(joint["pivot"], dtype=np.float64) + t
        value = float(instance.joint_values[frame, index]) if instance.joint_values.shape[1] > index else 0.0
        out.append((index, axis / np.linalg.norm(axis), origin, value))
    return out


def true_joints(instance: Instance, frame: int) -> list[TrueJoint]:
    """The instance's joints as they are in `frame` (joints_in_frame), with the vertices each moves."""
    out = []
    for index, axis, origin, value in joints_in_frame(instance, frame):
        joint = instance.joints[index]
        lo, hi = joint["range"]
        room = 1.0 if hi - value >= value - lo else -1.0
        moved = np.isin(instance.part_ids, joint["child_parts"])
        out.append(TrueJoint(joint["name"], joint["type"], axis, origin, moved, room))
    return out


def true_articulation(instance: Instance, frame: int) -> Articulation:
    """The instance's own parts and joints (joints_in_frame) as an Articulation in the pose of `frame`,
    limits relative to it: a perfect readout, the ceiling of what a readout can give the push check.
    Each part takes the label of the smallest child set that holds it (0: the base)."""
    kept = joints_in_frame(instance, frame)
    children = [frozenset(instance.joints[index]["child_parts"]) for index, *_ in kept]
    order = sorted(range(len(kept)), key=lambda k: len(children[k]), reverse=True)  # parents first
    label_of_part = {}
    for part in np.unique(instance.part_ids).tolist():
        holders = [rank for rank, k in enumerate(order) if part in children[k]]
        label_of_part[part] = 1 + min(holders, key=lambda rank: len(children[order[rank]])) if holders else 0
    joints = []
    for label, k in enumerate(order, start=1):
        index, axis, origin, value = kept[k]
        record = instance.joints[index]
        lo, hi = record["range"]
        joints.append(Joint(record["name"], record["type"], axis, origin, lo - value, hi - value,
                            label_of_part[int(record["parent_part"])], label, 1.0))
    labels = np.array([label_of_part[int(p)] for p in instance.part_ids])
    return Articulation(labels, joints, "articulated" if joints else "soft")


def line_distance(point: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> float:
    """Distance of point (3,) from the line through origin (3,) along the unit axis (3,)."""
    offset = point - origin
    return float(np.linalg.norm(offset - axis * (offset @ axis)))


def child_ious(predicted: Articulation, truth: list[TrueJoint]) -> np.ndarray:
    """(true joints, predicted joints) IoU of the vertex sets the two joints move."""
    moved = [predicted.subtree(j.child) for j in predicted.joints]
    iou = np.zeros((len(truth), len(moved)))
    for a, true in enumerate(truth):
        for b, mask in enumerate(moved):
            union = np.logical_or(true.moved, mask).sum()
            iou[a, b] = np.logical_and(true.moved, mask).sum() / union if union else 0.0
    return iou


def child_matches(predicted: Articulation, truth: list[TrueJoint]) -> dict:
    """{true joint index: predicted joint index}, one to one by child IoU (Hungarian); true joints
    left unmatched, or matched to a joint that moves none of their vertices, are absent."""
    from scipy.optimize import linear_sum_assignment

    iou = child_ious(predicted, truth)
    if not iou.size:
        return {}
    return {int(a): int(b) for a, b in zip(*linear_sum_assignment(-iou)) if iou[a, b] > 0.0}


def score_readout(predicted: Articulation, truth: list[TrueJoint], vertices: np.ndarray) -> list[dict]:
    """One row per true joint (module docstring)."""
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    iou, match = child_ious(predicted, truth), child_matches(predicted, truth)
    rows = []
    for a, true in enumerate(truth):
        b = match.get(a)
        if b is None:
            rows.append({"joint": true.name, "true_type": true.type, "type": False, "axis_deg": 90.0,
                         "pivot": 1.0 if true.type == "revolute" else None, "child_iou": 0.0})
            continue
        joint = predicted.joints[b]
        angle = float(np.degrees(np.arccos(np.clip(abs(joint.axis @ true.axis), 0.0, 1.0))))
        pivot = (line_distance(true.origin, joint.origin, joint.axis) / diagonal
                 if true.type == "revolute" else None)
        rows.append({"joint": true.name, "true_type": true.type, "type": joint.type == true.type,
                     "axis_deg": angle, "pivot": pivot, "child_iou": float(iou[a, b])})
    return rows


def evaluate_files(model, paths: list, frame: int | None = None, config=None, head="auto",
                   progress: bool = True, push: bool = False, truth: bool = False) -> list[dict]:
    """Read out every instance file and score it; frame: the pose shown (default: frame T // 3 of
    procedural instances of at most 16 frames, the rest frame 0 of longer ones, e.g. neurok data real);
    push: also push each true joint's part through the readout (evaluation/push_checks.py); head: as
    readout.read_articulation's; truth: score the instances' own parts and joints instead of a readout
    (true_articulation: the push check's ceiling)."""
    from tqdm import tqdm

    from neurok_ros.articulation.readout import ReadoutConfig, articulate
    from neurok_ros.data.instance_format import load_instance

    rows = []
    for path in tqdm(paths, desc="articulation readout", unit="object", disable=not progress):
        instance = load_instance(path)
        shown = (instance.num_frames // 3 if frame is None else frame) if instance.num_frames <= 16 else 0
        vertices = instance.frames[shown].astype(np.float64)
        readout = (true_articulation(instance, shown) if truth
                   else articulate(model, vertices, instance.faces, config or ReadoutConfig(), head))
        joints = true_joints(instance, shown)
        for row, joint in zip(score_readout(readout, joints, vertices), joints):
            if push:
                from neurok_ros.evaluation.push_checks import push_check

                row.update(push_check(readout, joint, vertices, instance.faces, joint.room))
            row.update(object=str(path).rsplit("/", 1)[-1].removesuffix(".npz"), category=instance.category,
                       seconds=readout.seconds, vertices=instance.num_vertices)
            rows.append(row)
    return rows


def summary(rows: list[dict]) -> dict:
    """Joint type accuracy, mean axis error (deg), mean pivot error (revolute joints), mean child IoU
    and mean seconds per object over score rows; with pushes, the fraction that succeeded."""
    pivots = [r["pivot"] for r in rows if r["pivot"] is not None]
    seconds = {r["object"]: r["seconds"] for r in rows}
    out = {"joints": len(rows), "type_accuracy": float(np.mean([r["type"] for r in rows])),
           "axis_deg": float(np.mean([r["axis_deg"] for r in rows])),
           "pivot": float(np.mean(pivots)) if pivots else None,
           "child_iou": float(np.mean([r["child_iou"] for r in rows])),
           "seconds": float(np.mean(list(seconds.values())))}
    if rows and "push_success" in rows[0]:
        out["push_success"] = float(np.mean([r["push_success"] for r in rows]))
    return out


def markdown_table(rows: list[dict], group: str = "category") -> str:
    """One line per group (category or object) and one for all, in the columns of docs/articulation.md."""
    pushed = bool(rows) and "push_success" in rows[0]
    lines = [f"| {group} | joints | type accuracy | axis error (deg) | pivot error / diagonal | child IoU | seconds |"
             + (" push right |" if pushed else ""), "|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if pushed else "")]
    groups = sorted({r[group] for r in rows}) + ["**all**"]
    for name in groups:
        s = summary(rows if name == "**all**" else [r for r in rows if r[group] == name])
        pivot = "–" if s["pivot"] is None else f"{s['pivot']:.3f}"
        lines.append(f"| {name} | {s['joints']} | {s['type_accuracy']:.2f} | {s['axis_deg']:.1f} | {pivot} | "
                     f"{s['child_iou']:.2f} | {s['seconds']:.1f} |" + (f" {s['push_success']:.2f} |" if pushed else ""))
    return "\n".join(lines)
