"""Laptop: a base with a keyboard deck and a lid hinged at the back edge (1 revolute joint).

Object frame: base on z = 0, centred in x and y, the hinge along x at the back (+y) top edge.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One laptop instance; proportions, hinge limit and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    w = uniform(rng, 0.28, 0.40)
    d = w * uniform(rng, 0.62, 0.75)
    base_t = uniform(rng, 0.012, 0.024)
    lid_t = uniform(rng, 0.005, 0.010)
    gap = uniform(rng, 0.001, 0.003)
    open_max = uniform(rng, 1.9, 2.4)
    edge = w / uniform(rng, 8.0, 11.0)
    params = dict(width=w, depth=d, base_thickness=base_t, lid_thickness=lid_t, gap=gap,
                  open_max=open_max, mesh_edge=edge)

    obj = ArticulatedObject()
    deck = P.box((0.86 * w, 0.42 * d, 0.0015), (0.0, 0.1 * d, base_t))
    pad = P.box((0.3 * w, 0.22 * d, 0.001), (0.0, -0.3 * d, base_t))
    barrel = P.cylinder(0.45 * base_t, 0.7 * w, 12, (1, 0, 0), (0.0, d / 2 - 0.2 * base_t, base_t))
    obj.add_part("base", P.merge(P.box((w, d, base_t), (0, 0, base_t / 2), edge), deck, pad, barrel))
    hinge = obj.add_joint("lid_hinge", "revolute", (-1, 0, 0), (0.0, d / 2, base_t), (0.0, open_max))
    lid_z = base_t + gap + lid_t / 2
    obj.add_part("lid", P.box((w, d, lid_t), (0, 0, lid_z), edge), hinge)
    screen = P.box((0.9 * w, 0.84 * d, gap), (0.0, -0.02 * d, base_t + gap / 2 + 0.0002))
    obj.add_part("screen", screen, hinge)
    return animate(obj, rng, num_frames, "laptop", seed, params)
