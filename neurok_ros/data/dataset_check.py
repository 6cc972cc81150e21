"""Validate a generated dataset folder: manifest, every instance file, and the physics invariants
that can be checked cheaply (articulated parts rigid, dual quaternions reproduce the frames)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from neurok_ros.data.instance_format import Instance, load_instance, validate_instance
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry import dual_quaternion as dq

RIGID_TOLERANCE = 1e-5  # relative to the object size
DQ_TOLERANCE = 1e-5     # relative to the object size


def read_manifest(root: str | Path) -> dict:
    path = Path(root) / "manifest.json"
    if not path.is_file():
        raise NeurokInputError(f"{root}: no manifest.json (not a dataset folder)")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise NeurokInputError(f"{path}: not valid JSON ({exc})") from exc


def instance_problems(inst: Instance, rng: np.random.Generator) -> list[str]:
    """Format problems plus invariant violations of one instance."""
    problems = validate_instance(inst)
    if problems:
        return problems
    size = float(np.ptp(inst.rest_vertices, axis=0).max()) or 1.0
    reproduced = dq.apply(inst.vertex_dual_quaternions.astype(np.float64), inst.rest_vertices.astype(np.float64))
    if inst.kind == "articulated":
        error = np.abs(reproduced - inst.frames).max() / size
        if error > DQ_TOLERANCE:
            problems.append(f"dual quaternions miss the frames by {error:.2e} of the size")
        for part in np.unique(inst.part_ids):
            members = np.flatnonzero(inst.part_ids == part)
            a, b = rng.choice(members, size=(2, min(200, len(members))))
            rest = np.linalg.norm(inst.rest_vertices[a] - inst.rest_vertices[b], axis=-1)
            moved = np.linalg.norm(inst.frames[:, a] - inst.frames[:, b], axis=-1)
            drift = np.abs(moved - rest).max() / size
            if drift > RIGID_TOLERANCE:
                problems.append(f"part {part} is not rigid (distance drift {drift:.2e} of the size)")
    return problems


def check_dataset(root: str | Path, progress: bool = True) -> dict:
    """Check every file listed by the manifest. Returns a report with per-category counts,
    vertex counts and a list of problems (empty when the dataset is valid)."""
    from tqdm import tqdm

    root = Path(root)
    manifest = read_manifest(root)
    rng = np.random.default_rng(0)
    problems: list[str] = []
    stats: dict[str, dict] = {}
    listed = sorted(name for split in manifest["splits"].values() for name in split)
    for category, info in manifest["categories"].items():
        stats[category] = {"kind": info["kind"], "count": 0, "vertices": [], "max_motion": []}
    expected = sum(info["count"] for info in manifest["categories"].values())
    if len(listed) != expected or len(set(listed)) != len(listed):
        problems.append(f"splits list {len(listed)} files ({len(set(listed))} unique), manifest counts {expected}")
    for name in tqdm(listed, desc="checking instances", unit="inst", disable=not progress):
        try:
            inst = load_instance(root / name)
        except NeurokInputError as exc:
            problems.append(str(exc))
            continue
        entry = stats.get(inst.category)
        if entry is None or entry["kind"] != inst.kind:
            problems.append(f"{name}: category/kind {inst.category}/{inst.kind} not in the manifest")
            continue
        if inst.num_frames != manifest["frames"]:
            problems.append(f"{name}: {inst.num_frames} frames, manifest says {manifest['frames']}")
        problems.extend(f"{name}: {p}" for p in instance_problems(inst, rng))
        size = float(np.ptp(inst.rest_vertices, axis=0).max()) or 1.0
        entry["count"] += 1
        entry["vertices"].append(inst.num_vertices)
        entry["max_motion"].append(float(np.linalg.norm(inst.frames - inst.rest_vertices, axis=-1).max() / size))
    for category, entry in stats.items():
        if entry["count"] != manifest["categories"][category]["count"]:
            problems.append(f"{category}: {entry['count']} readable instances, manifest says "
                            f"{manifest['categories'][category]['count']}")
    return {"manifest": manifest, "stats": stats, "problems": problems}
