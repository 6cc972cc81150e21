"""A validation set of real articulated assets from pip packages (LIBERO, pybullet_data).

Layout of the output folder (readable by `neurok data check | show`):
  DIR/manifest.json              frames, categories (one instance each), splits (all in "val"),
                                 objects (file, source, licence, asset, vertices, faces, parts, joints),
                                 skipped (category, reason)
  DIR/<category>_0000.npz        one instance (neurok_ros.data.instance_format)

Every instance has the same number of frames: 1 + frames_per_joint * (most joints of any object + 1);
objects with fewer joints spend the spare frames moving all joints together.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from neurok_ros.errors import NeurokInputError


def write_real_assets(out_dir: str | Path, sources: list[str] | None = None, frames_per_joint: int = 8,
                      progress: bool = True) -> dict:
    """Install (if needed) and convert every asset of `sources` into `out_dir`; returns the manifest.

    Objects that fail to load are skipped with a one-line message on stderr; NeurokInputError when none
    converts.
    """
    from tqdm import tqdm

    from neurok_ros.data.generate import instance_file_name
    from neurok_ros.data.instance_format import DATASET_VERSION, save_instance, validate_instance
    from neurok_ros.data.real_assets import mujoco_assets, sources as src

    if frames_per_joint < 2:
        raise NeurokInputError("--frames-per-joint must be at least 2")
    names = src.source_names(sources)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    skipped = [{"category": c, "reason": why} for c, why in src.EXCLUDED.items() if c.split("_")[0] in names]
    planned = []  # (category, source, relative file, absolute path, joint count)
    for name in names:
        try:
            src.ensure_installed(name)
        except NeurokInputError as exc:
            skipped.extend({"category": c, "reason": str(exc)} for c in src.SOURCES[name].assets)
            continue
        for category, relative in src.SOURCES[name].assets.items():
            path = src.asset_path(name, relative)
            try:
                planned.append((category, name, relative, path, mujoco_assets.count_moving_joints(path)))
            except NeurokInputError as exc:
                skipped.append({"category": category, "reason": str(exc)})
    for entry in skipped:
        print(f"skipped {entry['category']}: {entry['reason']}", file=sys.stderr)
    if not planned:
        raise NeurokInputError("no asset could be loaded")
    num_frames = 1 + frames_per_joint * (max(p[4] for p in planned) + 1)
    objects = []
    for category, name, relative, path, _ in tqdm(planned, desc="converting real assets", unit="obj",
                                                  disable=not progress):
        generator = {"name": "real_assets", "source": src.source_label(name),
                     "licence": src.SOURCES[name].licence, "file": relative}
        try:
            inst = mujoco_assets.convert_asset(path, category, generator, frames_per_joint, num_frames)
            problems = validate_instance(inst)
            if problems:
                raise NeurokInputError("; ".join(problems))
        except NeurokInputError as exc:
            skipped.append({"category": category, "reason": str(exc)})
            tqdm.write(f"skipped {category}: {exc}", file=sys.stderr)
            continue
        file = instance_file_name(category, 0)
        save_instance(out_dir / file, inst)
        objects.append({"file": file, "category": category, "source": generator["source"],
                        "licence": generator["licence"], "asset": relative, "vertices": inst.num_vertices,
                        "faces": len(inst.faces), "parts": int(inst.part_ids.max()) + 1,
                        "joints": [{"name": j["name"], "type": j["type"]} for j in inst.joints]})
    if not objects:
        raise NeurokInputError("no asset converted")
    manifest = {
        "dataset_version": DATASET_VERSION,
        "seed": 0,
        "frames": num_frames,
        "categories": {o["category"]: {"kind": "articulated", "count": 1} for o in objects},
        "splits": {"train": [], "val": sorted(o["file"] for o in objects), "test": [], "test_holdout": []},
        "objects": objects,
        "skipped": skipped,
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
