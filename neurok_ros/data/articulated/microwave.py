"""Microwave oven: a cavity beside a control panel, a side-hinged door, optional dial and turntable.

Joints: door hinge (about -z, hinge on the left), [timer dial about -y], [turntable about z]; 1-3 revolute.
Object frame: feet on z = 0, centred in x and y, door on the front (-y) face.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One microwave; sizes, optional parts, limits and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    W = uniform(rng, 0.42, 0.6)
    D = uniform(rng, 0.3, 0.45)
    H = uniform(rng, 0.24, 0.35)
    wall = uniform(rng, 0.01, 0.02)
    feet = uniform(rng, 0.006, 0.015)
    cavity_w = W * uniform(rng, 0.68, 0.78)
    door_t = uniform(rng, 0.02, 0.035)
    gap = uniform(rng, 0.002, 0.004)
    handle = bool(rng.random() < 0.6)
    dial = bool(rng.random() < 0.5)
    turntable = bool(rng.random() < 0.5)
    open_max = uniform(rng, 1.5, 1.95)
    edge = W / uniform(rng, 8.0, 11.0)
    params = dict(width=W, depth=D, height=H, wall=wall, feet=feet, cavity_width=cavity_w, door_thickness=door_t,
                  gap=gap, handle=handle, dial=dial, turntable=turntable, open_max=open_max, mesh_edge=edge)

    obj = ArticulatedObject()
    zc = feet + H / 2
    x_split = -W / 2 + cavity_w
    cavity = P.open_box((cavity_w, D, H), (-W / 2 + cavity_w / 2, 0.0, zc), wall, "-y", edge)
    panel = P.box_between((x_split, -D / 2, feet), (W / 2, D / 2, feet + H), edge)
    foot_parts = [P.cylinder(0.012, feet, 10, (0, 0, 1), (sx * (W / 2 - 0.04), sy * (D / 2 - 0.04), feet / 2))
                  for sx in (-1, 1) for sy in (-1, 1)]
    buttons = [P.box((0.045, 0.004, 0.016), ((x_split + W / 2) / 2, -D / 2 - 0.002, feet + H * f))
               for f in (0.25, 0.35, 0.45)]
    obj.add_part("body", P.merge(cavity, panel, *foot_parts, *buttons))

    front = -D / 2
    hinge = obj.add_joint("door_hinge", "revolute", (0, 0, -1), (-W / 2, front - door_t, 0.0), (0.0, open_max))
    door = [P.box_between((-W / 2 + gap, front - door_t, feet + gap), (x_split - gap, front, feet + H - gap), edge)]
    door.append(P.box_between((-W / 2 + 0.05, front - door_t - 0.002, feet + 0.05),
                              (x_split - 0.07, front - door_t + 0.001, feet + H - 0.05)))  # window
    obj.add_part("door", P.merge(*door), hinge)
    if handle:
        length = uniform(rng, 0.5, 0.75) * H
        obj.add_part("door_handle", P.bar_handle(length, uniform(rng, 0.02, 0.03), uniform(rng, 0.005, 0.008),
                                                 (x_split - 0.035, front - door_t, zc), (0, 0, 1), (0, -1, 0)), hinge)
    if dial:
        centre = ((x_split + W / 2) / 2, front, feet + 0.72 * H)
        j = obj.add_joint("timer_dial", "revolute", (0, -1, 0), centre, (0.0, uniform(rng, 3.0, 5.5)))
        obj.add_part("dial", P.knob(uniform(rng, 0.018, 0.026), uniform(rng, 0.015, 0.022), centre, (0, -1, 0), 16), j)
    if turntable:
        r = 0.42 * min(cavity_w - 2 * wall, D - wall)
        centre = np.array([-W / 2 + cavity_w / 2, -wall / 2, feet + wall + 0.012])
        j = obj.add_joint("turntable", "revolute", (0, 0, 1), centre, (0.0, 2 * np.pi))
        plate = P.lathe([0.15 * r, 0.15 * r, r, r, 0.9 * r], [-0.01, -0.004, -0.004, 0.0, 0.003], 24, (0, 0, 1), centre)
        cup = P.cylinder(0.035, 0.08, 14, (0, 0, 1), centre + (0.55 * r, 0.0, 0.043))  # something on the plate
        obj.add_part("turntable", P.merge(plate, cup), j)
    return animate(obj, rng, num_frames, "microwave", seed, params, primary=[hinge])
