"""docs/benchmarks.md: one table per benchmark group, with the machine and the command."""
from __future__ import annotations

import datetime
from pathlib import Path

from neurok_ros.benchmarks.timing import Measurement, machine_description


def write_report(path: str | Path, groups: dict[str, list[Measurement]], command: str,
                 notes: dict[str, str] | None = None, conditions: str = "") -> Path:
    """Write the Markdown report; `groups` maps a section title to its rows, `notes` a title to a
    paragraph under it; `conditions` is a sentence on the load while measuring."""
    lines = [
        "# Benchmarks",
        "",
        f"Machine: {machine_description()}.",
        "",
        f"Command: `{command}` (run on {datetime.date.today().isoformat()}).",
        "",
        "Each row is the median of the stated number of runs (after one warm-up unless its section says",
        "otherwise), with the fastest and slowest run. Compare medians and ratios rather than single runs.",
    ]
    if conditions:
        lines += ["", conditions]
    lines.append("")
    for title, rows in groups.items():
        lines += [f"## {title}", ""]
        if notes and title in notes:
            lines += [notes[title], ""]
        lines += ["| what | median (ms) | min (ms) | max (ms) | runs |", "|---|---:|---:|---:|---:|"]
        for row in rows:
            name = f"{row.name} ({row.note})" if row.note else row.name
            lines.append(f"| {name} | {row.median_ms:.1f} | {row.min_ms:.1f} | {row.max_ms:.1f} | {row.repeats} |")
        lines.append("")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path
