"""Dataset generation: seconds per instance for every category (one core)."""
from __future__ import annotations

from neurok_ros.benchmarks.timing import Measurement, measure


def benchmark_data_generation(num_frames: int = 16, repeats: int = 3) -> list[Measurement]:
    from neurok_ros.data.categories import all_categories

    rows = []
    for name, (kind, generate) in sorted(all_categories().items(), key=lambda item: (item[1][0], item[0])):
        seeds = iter(range(1000))
        rows.append(measure(f"generate one {name} instance ({kind}, {num_frames} frames)",
                            lambda generate=generate, seeds=seeds: generate(next(seeds), num_frames),
                            repeats=repeats, warmup=0))
    return rows
