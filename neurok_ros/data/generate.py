"""Generate a 4D dataset in parallel: one .npz per instance plus manifest.json with the splits.

Layout of a dataset folder:
  DIR/manifest.json                 version, seed, frames, categories with kinds and counts, splits
  DIR/<category>_<index:04d>.npz    one instance (neurok_ros.data.instance_format)

Instance seeds come from (dataset seed, category name, index) through numpy's SeedSequence, so
one instance can be regenerated alone and the same seed gives byte-identical files.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neurok_ros.data.categories import all_categories
from neurok_ros.data.instance_format import DATASET_VERSION, save_instance, validate_instance
from neurok_ros.data.splits import make_splits
from neurok_ros.errors import NeurokInputError


@dataclass(frozen=True)
class InstanceTask:
    category: str
    index: int
    seed: int
    num_frames: int
    path: str


def instance_seed(dataset_seed: int, category: str, index: int) -> int:
    """Deterministic 32-bit seed of one instance."""
    sequence = np.random.SeedSequence([dataset_seed, zlib.crc32(category.encode()), index])
    return int(sequence.generate_state(1)[0])


def instance_file_name(category: str, index: int) -> str:
    return f"{category}_{index:04d}.npz"


def plan_tasks(out_dir: Path, counts: dict[str, int], num_frames: int, seed: int) -> list[InstanceTask]:
    """Tasks for every instance; slow kinds (simulated) first so workers stay balanced."""
    registry = all_categories()
    order = {"elastic": 0, "cloth": 1, "articulated": 2}
    tasks = []
    for category in sorted(counts, key=lambda c: (order[registry[c][0]], c)):
        for index in range(counts[category]):
            tasks.append(InstanceTask(category, index, instance_seed(seed, category, index), num_frames,
                                      str(out_dir / instance_file_name(category, index))))
    return tasks


def _run_task(task: InstanceTask) -> tuple[str, int, float]:
    import time

    start = time.perf_counter()
    kind, generate = all_categories()[task.category]
    instance = generate(task.seed, task.num_frames)
    problems = validate_instance(instance)
    if problems:
        raise RuntimeError(f"{task.category} seed {task.seed}: invalid instance: {'; '.join(problems)}")
    save_instance(task.path, instance)
    return task.category, instance.num_vertices, time.perf_counter() - start


def resolve_counts(categories: list[str] | None, per_kind: dict[str, int] | None,
                   per_category: int | None) -> dict[str, int]:
    """Instances per category from either one number for all or a per-kind table."""
    registry = all_categories()
    chosen = categories or sorted(registry)
    unknown = [c for c in chosen if c not in registry]
    if unknown:
        raise NeurokInputError(f"unknown categories {unknown}; known: {sorted(registry)}")
    if per_category is not None:
        if per_category < 1:
            raise NeurokInputError("--instances-per-category must be at least 1")
        return {c: per_category for c in chosen}
    return {c: int(per_kind[registry[c][0]]) for c in chosen}


def generate_dataset(out_dir: str | Path, counts: dict[str, int], num_frames: int, seed: int,
                     workers: int | None = None, val_fraction: float = 0.1, test_fraction: float = 0.1,
                     holdout_categories: list[str] | None = None, progress: bool = True) -> dict:
    """Generate every instance into `out_dir` and write manifest.json; returns the manifest
    plus a "timing" entry (not written to disk, so datasets stay byte-identical)."""
    import time

    from tqdm import tqdm

    if num_frames < 2:
        raise NeurokInputError("--frames must be at least 2")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    registry = all_categories()
    tasks = plan_tasks(out_dir, counts, num_frames, seed)
    workers = max(1, workers or os.cpu_count() or 1)
    start = time.perf_counter()
    per_category_seconds: dict[str, list[float]] = {c: [] for c in counts}
    vertex_counts: dict[str, list[int]] = {c: [] for c in counts}
    bar = tqdm(total=len(tasks), desc="generating 4D instances", unit="inst", disable=not progress)
    if workers == 1:
        results = map(_run_task, tasks)
        pool = None
    else:
        pool = multiprocessing.get_context("fork").Pool(workers)
        results = pool.imap_unordered(_run_task, tasks, chunksize=1)
    try:
        for category, n_vertices, seconds in results:
            per_category_seconds[category].append(seconds)
            vertex_counts[category].append(n_vertices)
            bar.update(1)
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
    files = {c: [instance_file_name(c, i) for i in range(counts[c])] for c in sorted(counts)}
    manifest = {
        "dataset_version": DATASET_VERSION,
        "seed": seed,
        "frames": num_frames,
        "categories": {c: {"kind": registry[c][0], "count": counts[c]} for c in sorted(counts)},
        "splits": make_splits(files, seed, val_fraction, test_fraction, holdout_categories or []),
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    manifest["timing"] = {
        "wall_seconds": time.perf_counter() - start,
        "workers": workers,
        "median_seconds_per_instance": {c: float(np.median(s)) for c, s in per_category_seconds.items()},
        "median_vertices": {c: int(np.median(v)) for c, v in vertex_counts.items()},
    }
    return manifest
