"""Articulated objects as a tree of joints carrying rigid parts, and their export as 4D instances.

Conventions: everything is described at the ZERO configuration (all joint values 0), in the object
frame (metres, z up). A joint rotates (revolute, radians) about / slides (prismatic, metres) along its
`axis` through `pivot`; it moves every part attached to it and every joint below it (product of
exponentials: the transform of joint j is G_j(q) = G_parent(q) @ M_j(q_j)). Parts with joint -1 are
the static base.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurok_ros.data.instance_format import Instance
from neurok_ros.geometry import dual_quaternion as dq

JOINT_TYPES = ("revolute", "prismatic")


@dataclass
class Part:
    """A rigid closed mesh: vertices (n, 3) float64 metres at the zero configuration, faces (m, 3) int64."""

    name: str
    vertices: np.ndarray
    faces: np.ndarray
    joint: int = -1  # the joint carrying this part; -1 = static base


@dataclass
class Joint:
    """One degree of freedom; axis (3,) unit and pivot (3,) metres at the zero configuration."""

    name: str
    type: str
    axis: np.ndarray
    pivot: np.ndarray
    range: tuple[float, float]
    parent: int = -1  # parent joint (listed earlier); -1 = attached to the static base


@dataclass
class ArticulatedObject:
    """Parts and joints of one object; joints are ordered parents first."""

    parts: list[Part] = field(default_factory=list)
    joints: list[Joint] = field(default_factory=list)

    def add_part(self, name: str, mesh, joint: int = -1) -> int:
        """Append a part from a (V, F) mesh; returns its part index."""
        V, F = mesh
        self.parts.append(Part(name, np.asarray(V, float), np.asarray(F, np.int64), joint))
        return len(self.parts) - 1

    def add_joint(self, name: str, type: str, axis, pivot, range, parent: int = -1) -> int:
        """Append a joint (its parent must already exist); returns its joint index."""
        if type not in JOINT_TYPES:
            raise ValueError(f"joint type {type!r} is not one of {JOINT_TYPES}")
        if not -1 <= parent < len(self.joints):
            raise ValueError(f"joint {name!r}: parent {parent} is not an existing joint")
        lo, hi = float(range[0]), float(range[1])
        if not lo < hi:
            raise ValueError(f"joint {name!r}: empty range [{lo}, {hi}]")
        axis = np.asarray(axis, float)
        self.joints.append(Joint(name, type, axis / np.linalg.norm(axis), np.asarray(pivot, float), (lo, hi),
                                 parent))
        return len(self.joints) - 1

    def translate(self, offset) -> None:
        """Shift every part and joint pivot by `offset` (3,) metres (e.g. to rest the object on z = 0)."""
        offset = np.asarray(offset, float)
        for part in self.parts:
            part.vertices = part.vertices + offset
        for joint in self.joints:
            joint.pivot = joint.pivot + offset

    @property
    def ranges(self) -> np.ndarray:
        """(J, 2) float64 joint limits [lo, hi]."""
        return np.array([j.range for j in self.joints], float).reshape(-1, 2)


def joint_motion(joint: Joint, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Local motion M_j of one joint for values (T,): rotation (T, 3, 3) and translation (T, 3)."""
    values = np.asarray(values, float)
    T = len(values)
    if joint.type == "prismatic":
        return np.broadcast_to(np.eye(3), (T, 3, 3)).copy(), values[:, None] * joint.axis
    k = joint.axis
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    s, c = np.sin(values)[:, None, None], np.cos(values)[:, None, None]
    R = np.eye(3) + s * K + (1 - c) * (K @ K)
    return R, joint.pivot - R @ joint.pivot


def joint_transforms(obj: ArticulatedObject, joint_values) -> tuple[np.ndarray, np.ndarray]:
    """World transforms G_j of every joint frame for joint_values (T, J): R (T, J, 3, 3), t (T, J, 3)."""
    q = np.asarray(joint_values, float).reshape(-1, len(obj.joints))
    T, J = q.shape
    R = np.empty((T, J, 3, 3))
    t = np.empty((T, J, 3))
    for j, joint in enumerate(obj.joints):
        Rm, tm = joint_motion(joint, q[:, j])
        if joint.parent < 0:
            R[:, j], t[:, j] = Rm, tm
        else:
            Rp, tp = R[:, joint.parent], t[:, joint.parent]
            R[:, j] = Rp @ Rm
            t[:, j] = np.einsum("tab,tb->ta", Rp, tm) + tp
    return R, t


def pose(obj: ArticulatedObject, joint_values) -> tuple[np.ndarray, np.ndarray]:
    """Per-part rigid transforms x -> R x + t from the zero configuration, for joint_values (T, J).

    Returns R (T, P, 3, 3) and t (T, P, 3), float64.
    """
    q = np.asarray(joint_values, float).reshape(-1, len(obj.joints))
    Rj, tj = joint_transforms(obj, q)
    T = len(q)
    R = np.broadcast_to(np.eye(3), (T, len(obj.parts), 3, 3)).copy()
    t = np.zeros((T, len(obj.parts), 3))
    for p, part in enumerate(obj.parts):
        if part.joint >= 0:
            R[:, p], t[:, p] = Rj[:, part.joint], tj[:, part.joint]
    return R, t


def subtree_parts(obj: ArticulatedObject, joint: int) -> list[int]:
    """Indices of all parts moved by `joint` (attached to it or to a joint below it)."""
    moved = set()
    for p, part in enumerate(obj.parts):
        j = part.joint
        while j >= 0:
            if j == joint:
                moved.add(p)
                break
            j = obj.joints[j].parent
    return sorted(moved)


def parent_part(obj: ArticulatedObject, joint: int) -> int:
    """The first part rigidly attached to the link the joint hangs from (the base: first base part)."""
    j = obj.joints[joint].parent
    while True:
        for p, part in enumerate(obj.parts):
            if part.joint == j:
                return p
        if j < 0:
            return -1
        j = obj.joints[j].parent


def make_instance(obj: ArticulatedObject, joint_trajectory, times, category: str, generator_info: dict,
                  rest_joint_values) -> Instance:
    """Pose `obj` along joint_trajectory (T, J) at times (T,) seconds into an articulated Instance.

    rest_joint_values (J,): the joint state of the rest mesh (any state in range; every frame is
    relative to it). Vertex dual quaternions are exact: for a vertex of part p,
    dq[t, i] = (G_p(q_t) G_p(q_rest)^-1). Joint axes and pivots are reported in the rest pose.
    """
    q = np.asarray(joint_trajectory, float).reshape(-1, len(obj.joints))
    q_rest = np.asarray(rest_joint_values, float).reshape(1, len(obj.joints))
    V0 = np.concatenate([p.vertices for p in obj.parts])
    counts = [len(p.vertices) for p in obj.parts]
    offsets = np.cumsum([0] + counts[:-1])
    F = np.concatenate([p.faces + o for p, o in zip(obj.parts, offsets)])
    part_ids = np.repeat(np.arange(len(obj.parts)), counts)

    R_rest, t_rest = pose(obj, q_rest)
    R_rest, t_rest = R_rest[0], t_rest[0]  # (P, 3, 3), (P, 3)
    R_t, t_t = pose(obj, q)
    R_rel = R_t @ np.swapaxes(R_rest, -1, -2)[None]  # T_t * T_rest^-1
    t_rel = t_t - np.einsum("tpab,pb->tpa", R_rel, t_rest)

    rest = np.einsum("nab,nb->na", R_rest[part_ids], V0) + t_rest[part_ids]
    frames = np.einsum("tnab,nb->tna", R_t[:, part_ids], V0) + t_t[:, part_ids]
    part_dq = dq.from_rotation_translation(R_rel, t_rel)  # (T, P, 8)

    Rj_rest, tj_rest = joint_transforms(obj, q_rest)
    joints = []
    for j, joint in enumerate(obj.joints):
        if joint.parent >= 0:
            Rp, tp = Rj_rest[0, joint.parent], tj_rest[0, joint.parent]
        else:
            Rp, tp = np.eye(3), np.zeros(3)
        joints.append({
            "name": joint.name,
            "type": joint.type,
            "axis": [float(x) for x in Rp @ joint.axis],
            "pivot": [float(x) for x in Rp @ joint.pivot + tp],
            "range": [float(joint.range[0]), float(joint.range[1])],
            "parent_part": parent_part(obj, j),
            "child_parts": subtree_parts(obj, j),
            "parent_joint": joint.parent,
        })
    generator = dict(generator_info)
    generator["params"] = dict(generator.get("params", {}))
    generator["params"]["rest_joint_values"] = [float(x) for x in q_rest[0]]
    generator["params"]["part_names"] = [p.name for p in obj.parts]
    return Instance(
        category=category,
        kind="articulated",
        rest_vertices=rest,
        faces=F,
        frames=frames,
        times=np.asarray(times, float),
        vertex_dual_quaternions=part_dq[:, part_ids],
        part_ids=part_ids,
        joint_values=q,
        joints=joints,
        generator=generator,
    )
