"""Cabinet: a hollow carcass with shelves and one or two side-hinged overlay doors with handles.

Object frame: floor at z = 0, centred in x and y, doors on the front (-y) face; 1-2 revolute joints.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def door_handle(rng: np.random.Generator, free_x: float, hinge_side: int, front_y: float, z: float,
                height: float, params: dict) -> P.Mesh:
    """Vertical bar handle (or a knob) on a door face at y = front_y, near its free edge x = free_x."""
    inset = uniform(rng, 0.03, 0.06)
    x = free_x + hinge_side * inset
    if rng.random() < 0.3:
        radius = uniform(rng, 0.012, 0.02)
        params.setdefault("handles", []).append({"type": "knob", "radius": radius})
        return P.knob(radius, uniform(rng, 0.02, 0.03), (x, front_y, z), (0, -1, 0), 12, pointer=False)
    length = min(uniform(rng, 0.08, 0.22), 0.6 * height)
    standoff = uniform(rng, 0.025, 0.04)
    radius = uniform(rng, 0.005, 0.008)
    params.setdefault("handles", []).append({"type": "bar", "length": length, "standoff": standoff,
                                             "radius": radius})
    return P.bar_handle(length, standoff, radius, (x, front_y, z), (0, 0, 1), (0, -1, 0))


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One cabinet instance; proportions, door count, hinge limits and motion from the seed."""
    rng = np.random.default_rng(seed)
    W = uniform(rng, 0.4, 1.0)
    D = uniform(rng, 0.3, 0.6)
    H = uniform(rng, 0.5, 1.2)
    wall = uniform(rng, 0.015, 0.025)
    door_t = uniform(rng, 0.016, 0.024)
    plinth = uniform(rng, 0.0, 0.09) if rng.random() < 0.6 else 0.0
    n_doors = 1 if W < 0.55 else int(rng.integers(1, 3)) if W < 0.75 else 2
    n_shelves = int(rng.integers(0, 3))
    gap = uniform(rng, 0.002, 0.004)
    edge = max(W, H) / uniform(rng, 7.0, 10.0)
    params = dict(width=W, depth=D, height=H, wall=wall, door_thickness=door_t, plinth=plinth,
                  doors=n_doors, shelves=n_shelves, gap=gap, mesh_edge=edge)

    obj = ArticulatedObject()
    body_h = H - plinth
    pieces = [P.open_box((W, D, body_h), (0, 0, plinth + body_h / 2), wall, "-y", edge)]
    for k in range(n_shelves):
        z = plinth + body_h * (k + 1) / (n_shelves + 1)
        pieces.append(P.box_between((-W / 2 + wall, -D / 2 + 0.02, z - wall / 2), (W / 2 - wall, D / 2 - wall,
                                                                                  z + wall / 2), edge))
    if plinth > 0.02:
        pieces.append(P.box((W - 0.04, D - 0.06, plinth), (0, 0.01, plinth / 2)))
    obj.add_part("carcass", P.merge(*pieces))

    front = -D / 2
    z0, z1 = plinth + gap, H - gap
    sides = [int(rng.choice([-1, 1]))] if n_doors == 1 else [-1, 1]
    params["hinge_sides"] = sides
    params["open_max"] = []
    for k, side in enumerate(sides):
        hinge_x = side * W / 2
        free_x = (-side * W / 2 + side * gap) if n_doors == 1 else side * gap / 2
        x_lo, x_hi = sorted((hinge_x - side * gap, free_x))
        open_max = uniform(rng, 1.5, 2.2)
        params["open_max"].append(open_max)
        joint = obj.add_joint(f"door_{k}_hinge", "revolute", (0, 0, side), (hinge_x, front - door_t, 0.0),
                              (0.0, open_max))
        obj.add_part(f"door_{k}", P.box_between((x_lo, front - door_t, z0), (x_hi, front, z1), edge), joint)
        handle_z = z0 + (z1 - z0) * uniform(rng, 0.45, 0.8)
        obj.add_part(f"door_{k}_handle", door_handle(rng, free_x, side, front - door_t, handle_z, z1 - z0, params),
                     joint)
    return animate(obj, rng, num_frames, "cabinet", seed, params)
