"""Chest of drawers: a hollow carcass with dividers and 1-6 prismatic drawers (open trays) with handles.

Object frame: floor at z = 0, centred in x and y, drawers pull out towards -y.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def drawer_mesh(x0: float, x1: float, z0: float, z1: float, front_y: float, depth: float, front_t: float,
                wall: float, edge: float) -> P.Mesh:
    """Front panel spanning [x0, x1] x [z0, z1] at y in [front_y, front_y + front_t] plus an open tray behind."""
    panel = P.box_between((x0, front_y, z0), (x1, front_y + front_t, z1), edge)
    inset = 0.012
    tray_h = 0.75 * (z1 - z0)
    tray_depth = depth - front_t
    tray = P.open_box((x1 - x0 - 2 * inset, tray_depth, tray_h),
                      ((x0 + x1) / 2, front_y + front_t + tray_depth / 2, z0 + 0.01 + tray_h / 2), wall, "+z", 2 * edge)
    return P.merge(panel, tray)


def pull(rng: np.random.Generator, x: float, z: float, front_y: float, width: float, params: dict) -> P.Mesh:
    """A horizontal bar handle or a knob centred at (x, front_y, z) on a drawer front facing -y."""
    if rng.random() < 0.3 or width < 0.2:
        radius = uniform(rng, 0.01, 0.018)
        params["handles"].append({"type": "knob", "radius": radius})
        return P.knob(radius, uniform(rng, 0.018, 0.028), (x, front_y, z), (0, -1, 0), 12, pointer=False)
    length = uniform(rng, 0.3, 0.6) * width
    standoff = uniform(rng, 0.022, 0.035)
    radius = uniform(rng, 0.004, 0.007)
    params["handles"].append({"type": "bar", "length": length, "standoff": standoff, "radius": radius})
    return P.bar_handle(length, standoff, radius, (x, front_y, z), (1, 0, 0), (0, -1, 0))


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One chest of drawers; sizes, drawer grid, travel limits and motion from the seed."""
    rng = np.random.default_rng(seed)
    W = uniform(rng, 0.35, 0.9)
    D = uniform(rng, 0.35, 0.6)
    H = uniform(rng, 0.3, 1.1)
    wall = uniform(rng, 0.015, 0.022)
    rows = int(rng.integers(1, 4)) if H > 0.5 else int(rng.integers(1, 3))
    cols = 1 if W < 0.6 else int(rng.integers(1, 3))
    front_t = uniform(rng, 0.016, 0.022)
    gap = uniform(rng, 0.002, 0.004)
    tray_wall = uniform(rng, 0.008, 0.012)
    edge = max(W, H) / uniform(rng, 7.0, 10.0)
    params = dict(width=W, depth=D, height=H, wall=wall, rows=rows, columns=cols, front_thickness=front_t, gap=gap,
                  tray_wall=tray_wall, mesh_edge=edge, travel=[], handles=[])

    obj = ArticulatedObject()
    pieces = [P.open_box((W, D, H), (0, 0, H / 2), wall, "-y", edge)]
    cell_h = (H - 2 * wall - (rows - 1) * wall) / rows
    cell_w = (W - 2 * wall - (cols - 1) * wall) / cols
    for r in range(1, rows):
        z = wall + r * (cell_h + wall) - wall
        pieces.append(P.box_between((-W / 2 + wall, -D / 2, z), (W / 2 - wall, D / 2 - wall, z + wall)))
    for c in range(1, cols):
        x = -W / 2 + wall + c * (cell_w + wall) - wall
        pieces.append(P.box_between((x, -D / 2, wall), (x + wall, D / 2 - wall, H - wall)))
    obj.add_part("carcass", P.merge(*pieces))

    depth = D - wall - 0.02
    for r in range(rows):
        for c in range(cols):
            x0 = -W / 2 + wall + c * (cell_w + wall) + gap
            z0 = wall + r * (cell_h + wall) + gap
            x1, z1 = x0 + cell_w - 2 * gap, z0 + cell_h - 2 * gap
            travel = uniform(rng, 0.6, 0.85) * depth
            params["travel"].append(travel)
            k = len(obj.joints)
            joint = obj.add_joint(f"drawer_{k}_slide", "prismatic", (0, -1, 0), (0.0, -D / 2, (z0 + z1) / 2),
                                  (0.0, travel))
            obj.add_part(f"drawer_{k}", drawer_mesh(x0, x1, z0, z1, -D / 2, depth, front_t, tray_wall, edge), joint)
            handle_z = z0 + (z1 - z0) * uniform(rng, 0.5, 0.75)
            obj.add_part(f"drawer_{k}_handle", pull(rng, (x0 + x1) / 2, handle_z, -D / 2, x1 - x0, params), joint)
    return animate(obj, rng, num_frames, "drawer", seed, params, p_move=0.5)
