"""Box with a hinged lid (1 revolute joint) or two cardboard flaps (2 revolute joints).

Object frame: bottom on z = 0, centred in x and y, the longer side along x.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One box instance; sizes, variant (lid / flaps), limits and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    W = uniform(rng, 0.12, 0.5)
    D = W * uniform(rng, 0.5, 1.0)
    H = uniform(rng, 0.25, 0.9) * W
    variant = "lid" if rng.random() < 0.5 else "flaps"
    wall = uniform(rng, 0.004, 0.012) if variant == "lid" else uniform(rng, 0.002, 0.005)
    edge = W / uniform(rng, 7.0, 10.0)
    params = dict(width=W, depth=D, height=H, wall=wall, variant=variant, mesh_edge=edge)

    obj = ArticulatedObject()
    obj.add_part("body", P.open_box((W, D, H), (0, 0, H / 2), wall, "+z", edge))
    if variant == "lid":
        overhang = uniform(rng, 0.0, 0.01)
        lid_t = wall * uniform(rng, 1.0, 1.6)
        open_max = uniform(rng, 1.6, 2.5)
        params.update(overhang=overhang, lid_thickness=lid_t, open_max=[open_max])
        hinge = obj.add_joint("lid_hinge", "revolute", (-1, 0, 0), (0.0, D / 2 + overhang, H), (0.0, open_max))
        lid = [P.box_between((-W / 2 - overhang, -D / 2 - overhang, H), (W / 2 + overhang, D / 2 + overhang, H + lid_t),
                             edge)]
        if rng.random() < 0.5:  # a lip inside the walls keeps the lid in place
            lip = (W / 2 - wall - 0.002, D / 2 - wall - 0.002)
            lid.append(P.box_between((-lip[0], -lip[1], H - 0.01), (lip[0], lip[1], H), edge))
        if rng.random() < 0.6:  # a front tab to lift it by
            lid.append(P.box((0.12 * W, 0.015, 0.004), (0.0, -D / 2 - overhang - 0.0075, H + lid_t / 2)))
        obj.add_part("lid", P.merge(*lid), hinge)
    else:
        flap_t = wall
        gap = uniform(rng, 0.0, 0.004)
        params.update(flap_thickness=flap_t, flap_gap=gap, open_max=[])
        for k, side in enumerate((-1, 1)):  # flaps hinged on the front (-y) and back (+y) top edges
            open_max = uniform(rng, 2.2, 3.0)
            params["open_max"].append(open_max)
            hinge = obj.add_joint(f"flap_{k}_hinge", "revolute", (-side, 0, 0), (0.0, side * D / 2, H), (0.0, open_max))
            y_in = side * gap / 2
            y_lo, y_hi = sorted((side * D / 2, y_in))
            flap = P.box_between((-W / 2, y_lo, H), (W / 2, y_hi, H + flap_t), edge)
            obj.add_part(f"flap_{k}", flap, hinge)
    return animate(obj, rng, num_frames, "box_lid", seed, params)
