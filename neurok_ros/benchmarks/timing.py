"""Median wall-clock timing and a description of the machine it ran on."""
from __future__ import annotations

import os
import platform
import statistics
import time
from dataclasses import dataclass


@dataclass
class Measurement:
    """One benchmark row: median and spread of `repeats` timed runs, in milliseconds."""

    name: str
    median_ms: float
    min_ms: float
    max_ms: float
    repeats: int
    note: str = ""


def measure(name: str, fn, repeats: int = 7, warmup: int = 1, note: str = "") -> Measurement:
    """Time `fn()` `repeats` times after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return Measurement(name, statistics.median(samples), min(samples), max(samples), repeats, note)


def machine_description() -> str:
    """CPU model, core count, memory, Python and torch versions, GPU if any."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = ""
    try:
        import psutil

        memory = f", {psutil.virtual_memory().total / 2**30:.0f} GiB RAM"
    except ImportError:
        pass
    parts = [f"{cpu}, {os.cpu_count()} cores{memory}", f"Python {platform.python_version()}"]
    try:
        import torch

        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
        parts.append(f"torch {torch.__version__} ({gpu}, {torch.get_num_threads()} threads)")
    except ImportError:
        pass
    return "; ".join(parts)
