"""Desk lamp: a base, an optional swivel turret and 2-3 arm links ending in a tilting shade (a chain).

Joints, parents first: [swivel about z], shoulder, [middle], elbow, head; 3-5 revolute joints.
Object frame: base on z = 0 centred on the z axis; at zero joint values the lower arm points up,
the last arm runs along +x and the shade hangs down. The elbow limit is set so the head never goes
below the table top.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject, pose
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def _arm(start, end, radius: float, knuckle: float) -> P.Mesh:
    """A rod from `start` to `end` with a hinge knuckle (short cylinder along y) at `start`."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    rod = P.tube(np.stack([start, (start + end) / 2, end]), radius, 10)
    return P.merge(rod, P.cylinder(knuckle, 2.6 * knuckle, 12, (0, 1, 0), start))


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One desk lamp; sizes, link count, joint limits and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    base_r = uniform(rng, 0.06, 0.1)
    base_h = uniform(rng, 0.015, 0.035)
    square_base = bool(rng.random() < 0.35)
    post_h = uniform(rng, 0.03, 0.1)
    post_r = uniform(rng, 0.008, 0.014)
    links = int(rng.integers(2, 4))
    lengths = [uniform(rng, 0.25, 0.4)] + [uniform(rng, 0.18, 0.32) for _ in range(links - 1)]
    arm_r = uniform(rng, 0.005, 0.009)
    shade_len = uniform(rng, 0.08, 0.14)
    shade_r = uniform(rng, 0.045, 0.075)
    swivel = bool(rng.random() < 0.6)
    params = dict(base_radius=base_r, base_height=base_h, square_base=square_base, post_height=post_h,
                  post_radius=post_r, links=links, link_lengths=lengths, arm_radius=arm_r, shade_length=shade_len,
                  shade_radius=shade_r, swivel=swivel)

    obj = ArticulatedObject()
    if square_base:
        base = P.box((1.8 * base_r, 1.4 * base_r, base_h), (0.0, 0.0, base_h / 2), 0.04, taper=(0.85, 0.85))
    else:
        base = P.lathe([0.95 * base_r, base_r, base_r, 0.85 * base_r], [0.0, 0.004, 0.7 * base_h, base_h], 24)
    post = P.cylinder(post_r, post_h, 12, (0, 0, 1), (0.0, 0.0, base_h + post_h / 2))
    shoulder = np.array([0.0, 0.0, base_h + post_h + 0.01])
    parent = -1
    if swivel:
        obj.add_part("base", base)
        limits = (-uniform(rng, 1.5, 3.1), uniform(rng, 1.5, 3.1))
        parent = obj.add_joint("swivel", "revolute", (0, 0, 1), (0, 0, 0), limits)
        obj.add_part("turret", P.merge(post, P.cylinder(1.3 * post_r, 0.012, 12, (0, 0, 1), shoulder - (0, 0, 0.008))),
                     parent)
    else:
        obj.add_part("base", P.merge(base, post))

    # link directions at zero: first up, the last along +x, a middle one (3 links) up-forward
    directions = [np.array([0.0, 0.0, 1.0])] + ([np.array([0.6, 0.0, 0.8])] if links == 3 else []) \
        + [np.array([1.0, 0.0, 0.0])]
    names = ["shoulder"] + (["middle"] if links == 3 else []) + ["elbow"]
    limits = [(-uniform(rng, 0.3, 0.6), uniform(rng, 0.3, 0.5))] + \
        ([(-uniform(rng, 0.2, 0.5), uniform(rng, 0.2, 0.4))] if links == 3 else []) + [(-uniform(rng, 0.8, 1.2), 0.4)]
    point = shoulder
    elbow_joint = -1
    for k, (name, direction, length, limit) in enumerate(zip(names, directions, lengths, limits)):
        parent = obj.add_joint(name, "revolute", (0, 1, 0), point, limit, parent)
        end = point + length * direction
        obj.add_part(f"arm_{k}", _arm(point, end, arm_r, 1.6 * arm_r), parent)
        point = end
        elbow_joint = parent
    head_limits = (-uniform(rng, 0.5, 0.9), uniform(rng, 0.5, 0.9))
    head = obj.add_joint("head", "revolute", (0, 1, 0), point, head_limits, parent)
    shade = P.lathe([shade_r, 0.97 * shade_r, 0.35 * shade_r, 0.3 * shade_r],
                    [0.0, 0.15 * shade_len, 0.85 * shade_len, shade_len], 20, (0, 0, 1),
                    point - (0.0, 0.0, shade_len + 0.012))
    knuckle = P.cylinder(1.6 * arm_r, 2.6 * 1.6 * arm_r, 12, (0, 1, 0), point)
    neck = P.cylinder(0.3 * shade_r, 0.02, 10, (0, 0, 1), point - (0.0, 0.0, 0.01))
    obj.add_part("shade", P.merge(shade, knuckle, neck), head)
    _limit_elbow(obj, elbow_joint, 0.005)
    params["elbow_range"] = list(obj.joints[elbow_joint].range)
    arm_joints = [j for j, joint in enumerate(obj.joints) if joint.name != "swivel"]
    return animate(obj, rng, num_frames, "lamp", seed, params, primary=arm_joints, closed_prob=0.0)


def _limit_elbow(obj: ArticulatedObject, elbow: int, table_clearance: float) -> None:
    """Lower the elbow's upper (head-down) limit until no moving part, on a 3-per-joint grid of joint
    values, comes closer than table_clearance (metres) to the table z = 0 (keeps a range >= 0.3 rad)."""
    ranges = obj.ranges
    grids = [np.linspace(lo, hi, 3) if j != 0 or obj.joints[0].name != "swivel" else np.zeros(1)
             for j, (lo, hi) in enumerate(ranges)]
    moving = [p for p, part in enumerate(obj.parts) if part.joint >= 0 and obj.joints[part.joint].name != "swivel"]
    for _ in range(12):
        grids[elbow] = np.linspace(*obj.joints[elbow].range, 3)
        q = np.stack(np.meshgrid(*grids, indexing="ij"), -1).reshape(-1, len(ranges))
        R, t = pose(obj, q)
        z = min((np.einsum("qab,nb->qna", R[:, p], obj.parts[p].vertices) + t[:, p, None])[..., 2].min()
                for p in moving)
        if z > table_clearance:
            return
        lo, hi = obj.joints[elbow].range
        if hi - 0.15 < lo + 0.3:
            return
        obj.joints[elbow].range = (lo, hi - 0.15)
