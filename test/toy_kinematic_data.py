"""Small 4D datasets for model and training tests, built with the articulated kinematic tree
(exact per-part dual quaternions) plus an analytically bent bar (per-vertex rigid transforms)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject, make_instance
from neurok_ros.data.articulated.parts import box
from neurok_ros.data.instance_format import DATASET_VERSION, Instance, save_instance
from neurok_ros.geometry import dual_quaternion as dq


def laptop(seed: int, frames: int = 6) -> Instance:
    """Base slab + lid on a revolute hinge along x; separate closed parts."""
    rng = np.random.default_rng(seed)
    w, d, t = rng.uniform(0.25, 0.4), rng.uniform(0.2, 0.3), rng.uniform(0.01, 0.03)
    obj = ArticulatedObject()
    hinge = obj.add_joint("hinge", "revolute", axis=[1, 0, 0], pivot=[0, d / 2, t], range=(0.0, 2.0))
    obj.add_part("base", box([w, d, t], center=[0, 0, t / 2], max_edge=0.1))
    obj.add_part("lid", box([w, d, t], center=[0, 0, 1.5 * t + 0.002], max_edge=0.1), joint=hinge)
    angles = np.linspace(0.0, rng.uniform(1.2, 2.0), frames)[:, None]
    return make_instance(obj, angles, np.arange(frames) / 10.0, "toy_laptop",
                         {"name": "toy_laptop", "version": "1", "seed": seed}, rest_joint_values=[0.3])


def drawer(seed: int, frames: int = 6) -> Instance:
    """Cabinet + drawer on a prismatic joint along -y."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.3, 0.5)
    obj = ArticulatedObject()
    slide = obj.add_joint("slide", "prismatic", axis=[0, -1, 0], pivot=[0, 0, 0], range=(0.0, 0.8 * s))
    obj.add_part("cabinet", box([s, s, s], center=[0, 0, s / 2], max_edge=0.15))
    obj.add_part("drawer", box([0.8 * s, 0.2 * s, 0.3 * s], center=[0, -0.6 * s, 0.5 * s], max_edge=0.15),
                 joint=slide)
    travel = np.linspace(0.0, rng.uniform(0.4, 0.8) * s, frames)[:, None]
    return make_instance(obj, travel, np.arange(frames) / 10.0, "toy_drawer",
                         {"name": "toy_drawer", "version": "1", "seed": seed}, rest_joint_values=[0.0])


def bent_bar(seed: int, frames: int = 6) -> Instance:
    """A bar along x bending about y: each vertex turns about the y axis through the origin by an
    angle proportional to its x, so every vertex has an exact rigid transform (faces do not)."""
    rng = np.random.default_rng(seed)
    length = rng.uniform(0.5, 0.8)
    V, F = box([length, 0.08, 0.08], center=[length / 2, 0, 0], max_edge=0.05, max_divisions=16)
    bend = np.linspace(0.0, rng.uniform(0.5, 1.0), frames)
    positions, dqs = [], []
    for b in bend:
        angles = b * V[:, 0] / length
        c, s = np.cos(angles), np.sin(angles)
        R = np.zeros((len(V), 3, 3))
        R[:, 0, 0], R[:, 0, 2], R[:, 1, 1], R[:, 2, 0], R[:, 2, 2] = c, s, 1, -s, c
        t = np.zeros((len(V), 3))
        dqs.append(dq.from_rotation_translation(R, t))
        positions.append(np.einsum("nab,nb->na", R, V))
    return Instance(category="toy_bar", kind="elastic", rest_vertices=V, faces=F, frames=np.stack(positions),
                    times=np.arange(frames) / 10.0, vertex_dual_quaternions=np.stack(dqs),
                    generator={"name": "toy_bar", "version": "1", "seed": seed})


GENERATORS = {"toy_laptop": laptop, "toy_drawer": drawer, "toy_bar": bent_bar}


def write_toy_dataset(root: Path, train: int = 3, val: int = 1, frames: int = 6) -> Path:
    """Write `train` + `val` instances of every toy category and a manifest with splits."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    splits = {"train": [], "val": [], "test": [], "test_holdout": []}
    for c, (category, generate) in enumerate(sorted(GENERATORS.items())):
        for i in range(train + val):
            name = f"{category}_{i:04d}.npz"
            save_instance(root / name, generate(100 * c + i, frames))
            splits["train" if i < train else "val"].append(name)
    manifest = {"dataset_version": DATASET_VERSION, "seed": 7, "frames": frames,
                "categories": {c: {"kind": "elastic" if c == "toy_bar" else "articulated",
                                   "count": train + val} for c in GENERATORS},
                "splits": splits}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return root
