"""Pliers lying flat: two crossed halves (jaw + curved handle with grip) on a pivot (1 revolute joint).

Object frame: lying on z = 0, the pivot on the z axis, jaws towards +x. The lower half is the base;
the upper half turns about +z, which opens the jaws and spreads the handles.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def _half(side: int, jaw_len: float, jaw_w: float, t: float, boss_r: float, handle_len: float, spread: float,
          handle_r: float, grip_r: float, z_boss: float) -> P.Mesh:
    """Jaw on the side y * side > 0, boss at z_boss, handle bending to y * side < 0 (crossed)."""
    jaw = np.array([(0.3 * boss_r, 0.0), (jaw_len, 0.0), (jaw_len, 0.18 * jaw_w), (0.55 * jaw_len, 0.5 * jaw_w),
                    (0.3 * boss_r, 0.9 * boss_r)])
    jaw[:, 1] *= side
    if side < 0:
        jaw = jaw[::-1]
    jaw_mesh = P.extrude(jaw, t, t / 2)
    boss = P.cylinder(boss_r, t / 2, 16, (0, 0, 1), (0.0, 0.0, z_boss))
    s = np.linspace(0.0, 1.0, 9)
    x = -0.5 * boss_r - s * handle_len
    y = -side * (0.25 * boss_r + spread * np.sin(0.5 * np.pi * np.minimum(s / 0.5, 1.0)) + 0.1 * spread * s)
    path = np.stack([x, y, np.full_like(x, t / 2)], 1)
    handle = P.tube(path, handle_r, 10)
    grip = P.tube(path[3:], grip_r, 10)
    return P.merge(jaw_mesh, boss, handle, grip)


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One pair of pliers; jaw / handle sizes, opening limit and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    jaw_len = uniform(rng, 0.03, 0.06)
    jaw_w = uniform(rng, 0.012, 0.02)
    t = uniform(rng, 0.008, 0.012)
    boss_r = uniform(rng, 0.008, 0.012)
    handle_len = uniform(rng, 0.09, 0.15)
    spread = uniform(rng, 0.008, 0.016)
    handle_r = uniform(rng, 0.0035, 0.005)
    grip_r = handle_r + uniform(rng, 0.002, 0.004)
    open_max = uniform(rng, 0.35, 0.6)
    params = dict(jaw_length=jaw_len, jaw_width=jaw_w, thickness=t, boss_radius=boss_r, handle_length=handle_len,
                  handle_spread=spread, handle_radius=handle_r, grip_radius=grip_r, open_max=open_max)

    obj = ArticulatedObject()
    obj.add_part("lower_half", _half(-1, jaw_len, jaw_w, t, boss_r, handle_len, spread, handle_r, grip_r, t / 4))
    joint = obj.add_joint("pivot", "revolute", (0, 0, 1), (0.0, 0.0, 0.0), (0.0, open_max))
    obj.add_part("upper_half", _half(1, jaw_len, jaw_w, t, boss_r, handle_len, spread, handle_r, grip_r, 3 * t / 4),
                 joint)
    z_min = min(part.vertices[:, 2].min() for part in obj.parts)
    obj.translate((0.0, 0.0, -z_min))
    return animate(obj, rng, num_frames, "pliers", seed, params)
