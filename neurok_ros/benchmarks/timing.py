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


def measure_interleaved(functions: dict, repeats: int = 7, warmup: int = 1,
                        notes: dict | None = None) -> list[Measurement]:
    """Time several functions taking turns (A B C A B C ...), `repeats` runs each after `warmup`.

    Taking turns spreads slow spells of a shared machine over all of them, so their ratios hold up
    better than when each is timed in one block. Returns one Measurement per function, in order.
    """
    for _ in range(warmup):
        for fn in functions.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        for name, fn in functions.items():
            start = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - start) * 1e3)
    notes = notes or {}
    return [Measurement(name, statistics.median(s), min(s), max(s), repeats, notes.get(name, ""))
            for name, s in samples.items()]


def _busy_cpu_seconds() -> float | None:
    """Seconds all CPUs of this machine spent busy since boot (from /proc/stat), or None."""
    try:
        with open("/proc/stat") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class CpuShare:
    """How much CPU other processes used while a block of benchmarks ran.

    other_cores: average number of cores busy with work that is not this process (or its children)
    over the wall time of the block; None where /proc/stat is not readable.
    """

    def __enter__(self):
        self.start_wall = time.perf_counter()
        self.start_busy = _busy_cpu_seconds()
        self.start_own = sum(os.times()[:4])
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.start_wall
        busy = _busy_cpu_seconds()
        own = sum(os.times()[:4]) - self.start_own
        self.other_cores = None
        if busy is not None and self.start_busy is not None and self.wall > 0:
            self.other_cores = max(0.0, (busy - self.start_busy - own) / self.wall)
        return False

    def sentence(self) -> str:
        """One plain sentence for the report."""
        cores = os.cpu_count() or 1
        if self.other_cores is None:
            return f"The run took {self.wall:.0f} s; whether other work shared the machine was not measured."
        shared = ("other work shared the machine while measuring, so absolute times are"
                  " inflated and noisier than on an idle machine"
                  if self.other_cores >= 0.1 else "the machine was otherwise idle")
        return (f"The run took {self.wall:.0f} s; other processes kept {self.other_cores:.2f} of the "
                f"{cores} cores busy on average over that time (from /proc/stat, less this process's "
                f"own CPU time): {shared}.")
