"""Room door: a frame, an overlay door leaf on a vertical hinge, and a lever handle on the leaf.

Two revolute joints in a chain: the hinge (leaf) and the lever (child of the hinge).
Object frame: floor at z = 0, the leaf's back face on y = 0, the frame behind it (y > 0).
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject
from neurok_ros.data.articulated.motion import animate, uniform
from neurok_ros.data.instance_format import Instance


def _lever(x: float, z: float, face_y: float, out: float, toward: float, length: float, radius: float) -> P.Mesh:
    """Rosette + L-shaped lever on the face y = face_y, pointing along x by `toward` (+1 / -1)."""
    rosette = P.cylinder(3.2 * radius, 0.01, 14, (0, 1, 0), (x, face_y + out * 0.005, z))
    neck = 0.045
    corner = 1.6 * radius
    path = [(x, face_y, z), (x, face_y + out * (neck - corner), z)]
    for a in np.linspace(0.0, np.pi / 2, 5)[1:-1]:
        path.append((x + toward * corner * (1 - np.cos(a)), face_y + out * (neck - corner + corner * np.sin(a)), z))
    path += [(x + toward * corner, face_y + out * neck, z), (x + toward * length, face_y + out * neck, z)]
    return P.merge(rosette, P.tube(np.asarray(path), radius, 10))


def generate(seed: int, num_frames: int = 16) -> Instance:
    """One door instance; sizes, hinge side, limits and motion from np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    w = uniform(rng, 0.7, 1.0)
    h = uniform(rng, 1.95, 2.2)
    t = uniform(rng, 0.035, 0.05)
    frame_w = uniform(rng, 0.05, 0.1)
    frame_d = uniform(rng, 0.08, 0.15)
    overlap = uniform(rng, 0.01, 0.02)
    side = int(rng.choice([-1, 1]))  # hinge at x = side * w / 2
    open_max = uniform(rng, 1.4, 1.9)
    lever_max = uniform(rng, 0.6, 0.9)
    lever_len = uniform(rng, 0.10, 0.14)
    lever_r = uniform(rng, 0.007, 0.010)
    handle_z = uniform(rng, 0.95, 1.08)
    handle_inset = uniform(rng, 0.055, 0.075)
    panels = int(rng.choice([0, 2, 4]))
    edge = h / uniform(rng, 9.0, 12.0)
    params = dict(width=w, height=h, thickness=t, frame_width=frame_w, frame_depth=frame_d, overlap=overlap,
                  hinge_side=side, open_max=open_max, lever_max=lever_max, lever_length=lever_len,
                  lever_radius=lever_r, handle_height=handle_z, raised_panels=panels, mesh_edge=edge)

    obj = ArticulatedObject()
    inner = w / 2 - overlap
    top = h - overlap
    frame = P.merge(
        P.box_between((-inner - frame_w, 0.0, 0.0), (-inner, frame_d, top + frame_w), edge),
        P.box_between((inner, 0.0, 0.0), (inner + frame_w, frame_d, top + frame_w), edge),
        P.box_between((-inner, 0.0, top), (inner, frame_d, top + frame_w), edge),
    )
    obj.add_part("frame", frame)
    hinge = obj.add_joint("door_hinge", "revolute", (0, 0, side), (side * w / 2, -t, 0.0), (0.0, open_max))
    leaf = [P.box_between((-w / 2, -t, 0.01), (w / 2, 0.0, h), edge)]
    if panels:
        rows = panels // 2
        pw, ph = 0.32 * w, (h - 0.35) / rows - 0.12
        for r in range(rows):
            zc = 0.2 + (r + 0.5) * (h - 0.35) / rows
            for sx in (-1, 1):
                leaf.append(P.box((pw, 0.006, ph), (sx * 0.2 * w, -t - 0.002, zc)))
    obj.add_part("leaf", P.merge(*leaf), hinge)
    x = -side * (w / 2 - handle_inset)
    lever = obj.add_joint("lever", "revolute", (0, side, 0), (x, -t / 2, handle_z), (0.0, lever_max), parent=hinge)
    handle = P.merge(_lever(x, handle_z, -t, -1, side, lever_len, lever_r),
                     _lever(x, handle_z, 0.0, 1, side, lever_len, lever_r))
    obj.add_part("lever", handle, lever)
    return animate(obj, rng, num_frames, "door", seed, params, primary=[hinge])
