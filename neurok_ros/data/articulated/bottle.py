"""Bottle with a screw cap: the cap twists about the bottle axis and (often) lifts along it.

Joints, parents first: [cap_lift, prismatic along z], cap_twist (revolute about z); 1-2 joints.
With a screw thread the lift follows the twist (pitch per turn) until the thread is free.
Object frame: bottom on z = 0, axis along z.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def body_profile(radius: float, height: float, shoulder: float, neck_r: float, neck_h: float, waist: float):
    """Profile (radii, heights) of the bottle body from the base to the neck top, metres."""
    radii = [0.9 * radius, radius, radius * (1 - waist), radius]
    heights = [0.0, 0.006, 0.5 * height, height]
    for a in np.linspace(0.0, 0.5 * np.pi, 5)[1:]:
        radii.append(neck_r + (radius - neck_r) * np.cos(a))
        heights.append(height + shoulder * np.sin(a))
    radii += [neck_r * 1.12, neck_r * 1.12, neck_r]
    heights += [height + shoulder + 0.002, height + shoulder + 0.004, height + shoulder + neck_h]
    return np.asarray(radii), np.asarray(heights)


def knurled_cap(radius: float, height: float, base_z: float, ridges: int, depth: float) -> P.Mesh:
    """Closed cap (lathe) whose side is ridged `ridges` times around, so a twist is visible."""
    V, F = P.lathe([radius, radius, 0.93 * radius], [0.0, 0.85 * height, height], 2 * ridges, (0, 0, 1),
                   (0.0, 0.0, base_z))
    side = np.arange(2 * 2 * ridges)  # the two full-radius rings
    angle = np.arctan2(V[side, 1], V[side, 0])
    V[side, :2] *= (1 + depth * np.cos(ridges * angle))[:, None]
    return V, F


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One bottle; profile, cap, thread and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    radius = uniform(rng, 0.025, 0.05)
    height = uniform(rng, 0.1, 0.24)
    shoulder = uniform(rng, 0.015, 0.05)
    neck_r = min(uniform(rng, 0.011, 0.02), 0.6 * radius)
    neck_h = uniform(rng, 0.012, 0.03)
    waist = uniform(rng, 0.0, 0.12)
    cap_r = neck_r * uniform(rng, 1.12, 1.3)
    cap_h = uniform(rng, 0.012, 0.025)
    ridges = int(rng.integers(10, 25))
    turns = uniform(rng, 1.0, 2.5)
    screw = bool(rng.random() < 0.7)
    pitch = uniform(rng, 0.003, 0.005)
    lift_max = uniform(rng, 0.02, 0.05)
    params = dict(radius=radius, height=height, shoulder=shoulder, neck_radius=neck_r, neck_height=neck_h,
                  waist=waist, cap_radius=cap_r, cap_height=cap_h, ridges=ridges, turns=turns, screw=screw,
                  pitch=pitch, lift_max=lift_max)

    obj = ArticulatedObject()
    radii, heights = body_profile(radius, height, shoulder, neck_r, neck_h, waist)
    obj.add_part("body", P.lathe(radii, heights, 24))
    top = heights[-1]
    cap = knurled_cap(cap_r, cap_h, top + 0.001 - 0.8 * cap_h, ridges, 0.04)
    twist_range = (0.0, 2 * np.pi * turns)
    lift = obj.add_joint("cap_lift", "prismatic", (0, 0, 1), (0, 0, top), (0.0, lift_max))
    twist = obj.add_joint("cap_twist", "revolute", (0, 0, 1), (0, 0, top), twist_range, lift)
    obj.add_part("cap", cap, twist)

    def thread(q):
        """Screw coupling: lift = pitch * turns twisted, held at zero until the thread releases."""
        q = np.array(q, float)
        q[..., lift] = np.clip(pitch * q[..., twist] / (2 * np.pi), 0.0, lift_max)
        return q

    return animate(obj, rng, num_frames, "bottle", seed, params, primary=[twist],
                   constraint=thread if screw else None)
