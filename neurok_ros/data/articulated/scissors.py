"""Scissors lying flat: two blades with ring handles crossing at a pivot screw (1 revolute joint).

Object frame: lying on z = 0, the pivot on the z axis, blades towards +x. The lower blade is the
base; the upper blade turns about +z, which opens the blades and spreads the rings.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def _half(mirror: int, blade_len: float, blade_w: float, t: float, z: float, ring_at, ring_major: float,
          ring_minor: float, ring_z: float, elongation: float) -> P.Mesh:
    """One blade + shank + ring; mirror = +1 for the lower blade, -1 mirrors it in y."""
    poly = np.array([(-0.012, -0.55 * blade_w), (0.4 * blade_len, -0.5 * blade_w), (blade_len, 0.0),
                     (-0.012, 0.45 * blade_w)])
    poly[:, 1] *= mirror
    if mirror < 0:
        poly = poly[::-1]
    blade = P.extrude(poly, t, z)
    rx, ry = ring_at
    inner_x = rx + ring_major * elongation * 0.92
    shank_path = np.array([(-0.008, 0.0, z), (0.5 * inner_x, 0.45 * ry, 0.5 * (z + ring_z)), (inner_x, ry, ring_z)])
    shank = P.tube(shank_path, 0.8 * ring_minor, 8)
    ring = P.torus(ring_major, ring_minor, 20, 8, (0, 0, 1), (rx, ry, ring_z), (elongation, 1.0))
    return P.merge(blade, shank, ring)


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One pair of scissors; blade / ring sizes, opening limit and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    blade_len = uniform(rng, 0.06, 0.12)
    blade_w = uniform(rng, 0.012, 0.02)
    t = uniform(rng, 0.0015, 0.003)
    ring_major = uniform(rng, 0.011, 0.018)
    ring_minor = uniform(rng, 0.003, 0.0045)
    elongation = uniform(rng, 1.0, 1.6)
    handle_len = uniform(rng, 0.045, 0.07)
    ring_offset = uniform(rng, 0.6, 1.0) * ring_major
    open_max = uniform(rng, 0.5, 0.9)
    params = dict(blade_length=blade_len, blade_width=blade_w, blade_thickness=t, ring_major=ring_major,
                  ring_minor=ring_minor, ring_elongation=elongation, handle_length=handle_len,
                  ring_offset=ring_offset, open_max=open_max)

    obj = ArticulatedObject()
    ring_x = -handle_len
    lower = _half(1, blade_len, blade_w, t, t / 2, (ring_x, ring_offset), ring_major, ring_minor, ring_minor,
                  elongation)
    screw = P.cylinder(uniform(rng, 0.003, 0.005), 2 * t + 0.0015, 12, (0, 0, 1), (0.0, 0.0, t))
    obj.add_part("lower_blade", P.merge(lower, screw))
    joint = obj.add_joint("pivot", "revolute", (0, 0, 1), (0.0, 0.0, 0.0), (0.0, open_max))
    upper = _half(-1, blade_len, blade_w, t, 1.5 * t, (ring_x, -ring_offset), ring_major, ring_minor,
                  ring_minor + t, elongation)
    obj.add_part("upper_blade", upper, joint)
    z_min = min(part.vertices[:, 2].min() for part in obj.parts)
    obj.translate((0.0, 0.0, -z_min))
    return animate(obj, rng, num_frames, "scissors", seed, params)
