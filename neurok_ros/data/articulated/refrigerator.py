"""Refrigerator: an insulated hollow body with shelves and two doors (+ a freezer drawer in one variant).

Variants: top_freezer / bottom_freezer (two doors hinged on the same side), side_by_side (doors
hinged on opposite sides), french (two doors over a prismatic freezer drawer). 2-3 joints.
Object frame: floor at z = 0, centred in x and y, doors on the front (-y) face.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.drawer import drawer_mesh
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance

VARIANTS = ("top_freezer", "bottom_freezer", "side_by_side", "french")


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One refrigerator; sizes, variant, door limits and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    W = uniform(rng, 0.55, 0.95)
    D = uniform(rng, 0.55, 0.75)
    H = uniform(rng, 1.4, 1.95)
    wall = uniform(rng, 0.03, 0.05)
    door_t = uniform(rng, 0.04, 0.07)
    gap = uniform(rng, 0.003, 0.006)
    variant = str(rng.choice(VARIANTS))
    split = uniform(rng, 0.28, 0.38)  # freezer share of the height (or of the width, side by side)
    edge = H / uniform(rng, 9.0, 12.0)
    params = dict(width=W, depth=D, height=H, wall=wall, door_thickness=door_t, gap=gap, variant=variant,
                  split=split, mesh_edge=edge, open_max=[], handles=[])

    obj = ArticulatedObject()
    pieces = [P.open_box((W, D, H), (0, 0, H / 2), wall, "-y", edge)]
    inner = (-W / 2 + wall, W / 2 - wall)
    if variant == "side_by_side":
        xs = -W / 2 + split * W
        pieces.append(P.box_between((xs - wall / 2, -D / 2, wall), (xs + wall / 2, D / 2 - wall, H - wall), edge))
        zs = None
    else:
        zs = H * (1 - split) if variant == "top_freezer" else H * split
        pieces.append(P.box_between((inner[0], -D / 2, zs - wall / 2), (inner[1], D / 2 - wall, zs + wall / 2), edge))
    if variant == "top_freezer":
        c0, c1 = wall, zs
    elif variant == "side_by_side":
        c0, c1 = wall, H - wall
    else:
        c0, c1 = zs, H - wall
    n_shelves = int(rng.integers(1, 4))
    params["shelves"] = n_shelves
    for k in range(n_shelves):
        z = c0 + (c1 - c0) * (k + 1) / (n_shelves + 1)
        pieces.append(P.box_between((inner[0], -D / 2 + 0.06, z), (inner[1], D / 2 - wall, z + 0.008)))
    obj.add_part("body", P.merge(*pieces))

    front = -D / 2
    doors = []  # (x0, x1, z0, z1, hinge side)
    side = int(rng.choice([-1, 1]))
    if variant in ("top_freezer", "bottom_freezer"):
        doors = [(-W / 2, W / 2, zs + gap / 2, H, side), (-W / 2, W / 2, 0.02, zs - gap / 2, side)]
    elif variant == "side_by_side":
        doors = [(-W / 2, xs - gap / 2, 0.02, H, -1), (xs + gap / 2, W / 2, 0.02, H, 1)]
    else:
        doors = [(-W / 2, -gap / 2, zs + gap / 2, H, -1), (gap / 2, W / 2, zs + gap / 2, H, 1)]
    for k, (x0, x1, z0, z1, s) in enumerate(doors):
        open_max = uniform(rng, 1.6, 2.1)
        params["open_max"].append(open_max)
        joint = obj.add_joint(f"door_{k}_hinge", "revolute", (0, 0, s), (s * W / 2, front - door_t, 0.0),
                              (0.0, open_max))
        obj.add_part(f"door_{k}", P.box_between((x0, front - door_t, z0), (x1, front, z1), edge), joint)
        length = min(uniform(rng, 0.25, 0.5), 0.7 * (z1 - z0))
        standoff, radius = uniform(rng, 0.035, 0.05), uniform(rng, 0.008, 0.012)
        params["handles"].append({"length": length, "standoff": standoff, "radius": radius})
        free_x = x0 if s > 0 else x1
        zc = float(np.clip(0.55 * H, z0 + length / 2 + 0.05, z1 - length / 2 - 0.05))  # near hand height
        handle = P.bar_handle(length, standoff, radius, (free_x + s * 0.05, front - door_t, zc), (0, 0, 1), (0, -1, 0))
        obj.add_part(f"door_{k}_handle", handle, joint)
    if variant == "french":
        travel = uniform(rng, 0.45, 0.7) * D
        params["drawer_travel"] = travel
        joint = obj.add_joint("freezer_drawer_slide", "prismatic", (0, -1, 0), (0.0, front, zs / 2), (0.0, travel))
        front_panel = P.box_between((-W / 2, front - door_t, 0.02), (W / 2, front, zs - gap / 2), edge)
        tray = drawer_mesh(inner[0] + 0.01, inner[1] - 0.01, wall + 0.01, zs - wall, front, D - 2 * wall, 0.01, 0.006,
                           2 * edge)
        obj.add_part("freezer_drawer", P.merge(front_panel, tray), joint)
        handle = P.bar_handle(0.6 * W, uniform(rng, 0.035, 0.05), uniform(rng, 0.008, 0.012),
                              (0.0, front - door_t, zs - 0.08), (1, 0, 0), (0, -1, 0))
        obj.add_part("freezer_drawer_handle", handle, joint)
    return animate(obj, rng, num_frames, "refrigerator", seed, params)
