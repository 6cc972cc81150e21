"""Sliding window: a frame with two glazed sashes in parallel tracks; one or both slide (prismatic).

Variants: hung (sashes slide vertically: lower up, upper down) or slider (horizontal: the sashes slide
towards each other). 1-2 prismatic joints. Object frame: sill on z = 0, centred in x, wall plane y = 0.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def rect_frame(x0: float, x1: float, z0: float, z1: float, y0: float, y1: float, bar: float,
               edge: float | None = None) -> P.Mesh:
    """Rectangular ring of four bars `bar` wide: outer bounds [x0, x1] x [z0, z1], depth [y0, y1]."""
    return P.merge(
        P.box_between((x0, y0, z0), (x1, y1, z0 + bar), edge),
        P.box_between((x0, y0, z1 - bar), (x1, y1, z1), edge),
        P.box_between((x0, y0, z0 + bar), (x0 + bar, y1, z1 - bar), edge),
        P.box_between((x1 - bar, y0, z0 + bar), (x1, y1, z1 - bar), edge),
    )


def sash(x0: float, x1: float, z0: float, z1: float, y0: float, y1: float, bar: float, edge: float) -> P.Mesh:
    """A sash: frame bars plus a glass pane in the middle of its depth."""
    yc = (y0 + y1) / 2
    glass = P.box_between((x0 + 0.7 * bar, yc - 0.003, z0 + 0.7 * bar), (x1 - 0.7 * bar, yc + 0.003, z1 - 0.7 * bar),
                          edge)
    return P.merge(rect_frame(x0, x1, z0, z1, y0, y1, bar, edge), glass)


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One window; sizes, variant, moving sashes, travel and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    W = uniform(rng, 0.5, 1.6)
    H = uniform(rng, 0.5, 1.6)
    frame_w = uniform(rng, 0.04, 0.07)
    frame_d = uniform(rng, 0.07, 0.14)
    sash_w = uniform(rng, 0.035, 0.06)
    sash_d = uniform(rng, 0.025, 0.04)
    variant = "hung" if rng.random() < 0.5 else "slider"
    both = bool(rng.random() < 0.5)
    edge = max(W, H) / uniform(rng, 8.0, 11.0)
    params = dict(width=W, height=H, frame_width=frame_w, frame_depth=frame_d, sash_width=sash_w, sash_depth=sash_d,
                  variant=variant, both_move=both, mesh_edge=edge)

    obj = ArticulatedObject()
    obj.add_part("frame", rect_frame(-W / 2, W / 2, 0.0, H, -frame_d / 2, frame_d / 2, frame_w, edge))
    ox0, ox1, oz0, oz1 = -W / 2 + frame_w, W / 2 - frame_w, frame_w, H - frame_w
    tracks = [(-sash_d - 0.002, -0.002), (0.002, sash_d + 0.002)]  # front track, back track
    params["travel"] = []
    if variant == "hung":
        zm = (oz0 + oz1) / 2
        sashes = [("lower_sash", (ox0, ox1, oz0, zm + sash_w / 2), tracks[0], (0, 0, 1)),
                  ("upper_sash", (ox0, ox1, zm - sash_w / 2, oz1), tracks[1], (0, 0, -1))]
        span = oz1 - oz0
    else:
        xm = (ox0 + ox1) / 2
        sashes = [("right_sash", (xm - sash_w / 2, ox1, oz0, oz1), tracks[0], (-1, 0, 0)),
                  ("left_sash", (ox0, xm + sash_w / 2, oz0, oz1), tracks[1], (1, 0, 0))]
        span = ox1 - ox0
    moving = [0, 1] if both else [int(rng.integers(0, 2))]
    for k, (name, (x0, x1, z0, z1), (y0, y1), axis) in enumerate(sashes):
        mesh = sash(x0, x1, z0, z1, y0, y1, sash_w, edge)
        if k == 0:  # a lock on the meeting rail of the front sash
            lock_at = ((x0 + x1) / 2, y0 - 0.006, z1 - sash_w / 2) if variant == "hung" else \
                (x0 + sash_w / 2, y0 - 0.006, (z0 + z1) / 2)
            mesh = P.merge(mesh, P.box((0.05, 0.012, 0.02), lock_at))
        if k in moving:
            travel = uniform(rng, 0.6, 0.95) * (span / 2 - sash_w / 2)
            params["travel"].append(travel)
            joint = obj.add_joint(f"{name}_slide", "prismatic", axis, ((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2),
                                  (0.0, travel))
            obj.add_part(name, mesh, joint)
        else:
            obj.add_part(name, mesh)
    return animate(obj, rng, num_frames, "window", seed, params)
