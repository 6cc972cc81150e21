"""Single-lever faucet: a deck plate and column with a spout, and a lever on 1-2 joints.

Joints, parents first: [spout swivel about z], [lever swing about z], lever lift (about x);
1-3 revolute joints. Object frame: plate on z = 0, column on the z axis, spout towards -y.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def spout_path(start_z: float, reach: float, rise: float, drop: float, steps: int = 12) -> np.ndarray:
    """Centre line (steps, 3) leaving the column at height start_z towards -y, arching up by `rise`
    and ending `drop` below the start, pointing down."""
    s = np.linspace(0.0, 1.0, steps)
    y = -reach * np.sin(0.5 * np.pi * s)
    arch = rise * np.sin(np.pi * np.minimum(s, 0.75) / 1.5)
    fall = (rise + drop) * np.clip((s - 0.75) / 0.25, 0, 1) ** 2
    z = start_z + arch - fall
    return np.stack([np.zeros_like(s), y, z], 1)


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One faucet; sizes, spout shape, joint set, limits and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    plate_r = uniform(rng, 0.025, 0.04)
    col_r = uniform(rng, 0.015, 0.024)
    col_h = uniform(rng, 0.08, 0.22)
    spout_r = uniform(rng, 0.007, 0.011)
    spout_z = col_h * uniform(rng, 0.45, 0.8)
    reach = uniform(rng, 0.09, 0.22)
    rise = uniform(rng, 0.0, 0.12)
    drop = min(uniform(rng, 0.01, 0.04), spout_z - 0.03)  # the outlet stays above the deck
    lever_len = uniform(rng, 0.06, 0.12)
    lever_r = uniform(rng, 0.004, 0.007)
    lever_tilt = uniform(rng, 0.1, 0.35)
    swivel = bool(rng.random() < 0.5)
    swing = bool(rng.random() < 0.6)
    params = dict(plate_radius=plate_r, column_radius=col_r, column_height=col_h, spout_radius=spout_r,
                  spout_height=spout_z, reach=reach, rise=rise, drop=drop, lever_length=lever_len,
                  lever_radius=lever_r, lever_tilt=lever_tilt, spout_swivel=swivel, lever_swing=swing)

    obj = ArticulatedObject()
    plate = P.lathe([plate_r, plate_r, 0.8 * plate_r], [0.0, 0.006, 0.012], 20)
    column = P.lathe([col_r, col_r, 0.92 * col_r], [0.0, col_h - 0.004, col_h], 16, (0, 0, 1), (0.0, 0.0, 0.011))
    top = 0.011 + col_h
    path = spout_path(spout_z, reach, rise, drop)
    outlet = P.cylinder(spout_r * 1.15, 0.008, 12, (0, 0, 1), path[-1] - (0, 0, 0.004))
    spout = P.merge(P.tube(path, spout_r, 12), outlet)
    if swivel:
        obj.add_part("body", P.merge(plate, column))
        limit = uniform(rng, 0.6, 1.4)
        j = obj.add_joint("spout_swivel", "revolute", (0, 0, 1), (0, 0, 0), (-limit, limit))
        collar = P.cylinder(col_r * 1.12, 2.4 * spout_r, 16, (0, 0, 1), (0.0, 0.0, spout_z))
        obj.add_part("spout", P.merge(spout, collar), j)
    else:
        obj.add_part("body", P.merge(plate, column, spout))

    parent = -1
    cap = P.lathe([0.9 * col_r, 0.9 * col_r, 0.6 * col_r], [0.0, 0.012, 0.02], 16, (0, 0, 1), (0.0, 0.0, top))
    if swing:
        limit = uniform(rng, 0.5, 1.0)
        parent = obj.add_joint("lever_swing", "revolute", (0, 0, 1), (0, 0, 0), (-limit, limit))
        obj.add_part("cartridge", cap, parent)
    else:
        obj.parts[0].vertices, obj.parts[0].faces = P.merge((obj.parts[0].vertices, obj.parts[0].faces), cap)
    hub = np.array([0.0, 0.0, top + 0.026])
    lift = obj.add_joint("lever_lift", "revolute", (1, 0, 0), hub, (0.0, uniform(rng, 0.35, 0.65)), parent)
    tip = hub + lever_len * np.array([0.0, np.cos(lever_tilt), np.sin(lever_tilt)])
    lever = P.merge(P.cylinder(0.55 * col_r, 0.016, 14, (1, 0, 0), hub),
                    P.tube(np.stack([hub, (hub + tip) / 2, tip]), lever_r, 10))
    obj.add_part("lever", lever, lift)
    return animate(obj, rng, num_frames, "faucet", seed, params, primary=[lift])
