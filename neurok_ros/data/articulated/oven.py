"""Oven: a cavity under a control panel, a bottom-hinged door that swings down, and 0-4 knobs.

Joints: door hinge (about +x at the bottom front edge), knobs (about -y); 1-5 revolute joints.
Object frame: floor at z = 0, centred in x and y, door on the front (-y) face.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One oven; sizes, knob count, limits and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    W = uniform(rng, 0.5, 0.9)
    D = uniform(rng, 0.5, 0.65)
    H = uniform(rng, 0.6, 0.95)
    wall = uniform(rng, 0.02, 0.03)
    plinth = uniform(rng, 0.05, 0.1)
    panel_h = uniform(rng, 0.1, 0.16)
    door_t = uniform(rng, 0.03, 0.05)
    gap = uniform(rng, 0.003, 0.006)
    knobs = int(rng.integers(0, 5))
    racks = int(rng.integers(1, 3))
    open_max = uniform(rng, 1.4, 1.62)
    edge = max(W, H) / uniform(rng, 6.5, 9.0)
    params = dict(width=W, depth=D, height=H, wall=wall, plinth=plinth, panel_height=panel_h, door_thickness=door_t,
                  gap=gap, knobs=knobs, racks=racks, open_max=open_max, mesh_edge=edge)

    obj = ArticulatedObject()
    z_top = H - panel_h
    cavity_h = z_top - plinth
    pieces = [P.open_box((W, D, cavity_h), (0.0, 0.0, plinth + cavity_h / 2), wall, "-y", edge),
              P.box_between((-W / 2, -D / 2, z_top), (W / 2, D / 2, H), edge),
              P.box_between((-W / 2 + 0.02, -D / 2 + 0.04, 0.0), (W / 2 - 0.02, D / 2, plinth), edge)]
    for k in range(racks):  # wire racks as thin plates
        z = plinth + cavity_h * (k + 1) / (racks + 1)
        pieces.append(P.box_between((-W / 2 + wall, -D / 2 + 0.05, z), (W / 2 - wall, D / 2 - wall, z + 0.006)))
    obj.add_part("body", P.merge(*pieces))

    front = -D / 2
    hinge = obj.add_joint("door_hinge", "revolute", (1, 0, 0), (0.0, front - door_t, plinth), (0.0, open_max))
    z0, z1 = plinth + gap, z_top - gap
    door = P.merge(P.box_between((-W / 2 + gap, front - door_t, z0), (W / 2 - gap, front, z1), edge),
                   P.box_between((-W / 2 + 0.08, front - door_t - 0.002, z0 + 0.2 * (z1 - z0)),
                                 (W / 2 - 0.08, front - door_t + 0.001, z1 - 0.16 * (z1 - z0))))
    obj.add_part("door", door, hinge)
    handle = P.bar_handle(uniform(rng, 0.55, 0.8) * W, uniform(rng, 0.035, 0.05), uniform(rng, 0.007, 0.011),
                          (0.0, front - door_t, z1 - 0.05), (1, 0, 0), (0, -1, 0))
    obj.add_part("door_handle", handle, hinge)
    knob_r = uniform(rng, 0.018, 0.026)
    for k in range(knobs):
        x = -W / 2 + W * (k + 1) / (knobs + 1)
        centre = (x, front, z_top + panel_h / 2)
        j = obj.add_joint(f"knob_{k}", "revolute", (0, -1, 0), centre, (0.0, uniform(rng, 3.0, 5.0)))
        obj.add_part(f"knob_{k}", P.knob(knob_r, uniform(rng, 0.02, 0.03), centre, (0, -1, 0), 16), j)
    return animate(obj, rng, num_frames, "oven", seed, params, primary=[hinge], p_move=0.5)
