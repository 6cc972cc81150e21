"""Drag path files for `neurok simulate --drag-path FILE`: where each dragged contact should be when.

Two formats, both in the mesh frame (metres) and seconds:
- CSV (.csv, .txt): one row per path knot, `t, x, y, z` for one contact or
  `t, x1, y1, z1, x2, y2, z2, ...` for C contacts (3 C + 1 columns). Lines starting with '#' and a
  header row whose first field is not a number are skipped. Times are >= 0 and strictly increasing.
- NumPy (.npz): arrays `times` (P,) and `positions` (P, C, 3) (or (P, 3) for one contact).

The contacts are the --contact points in order (C must match); without --contact they are the
path's first positions. A contact is pulled toward the piecewise-linear path by a spring-damper
(drag_stiffness, drag_damping); before the first knot the target moves linearly from the contact's
start, after the last it stays at the last knot.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from neurok_ros.errors import ActionError


def _read_csv(path: Path) -> tuple[np.ndarray, np.ndarray]:
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = [f for f in text.replace(",", " ").replace(";", " ").split()]
        try:
            rows.append([float(f) for f in fields])
        except ValueError:
            if rows:
                raise ActionError(f"{path}:{number}: not a row of numbers: {line.strip()!r}") from None
            continue  # a header row
    if not rows:
        raise ActionError(f"{path}: no path knots (expected rows t, x, y, z[, x2, y2, z2 ...])")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ActionError(f"{path}: rows have different numbers of columns {sorted(widths)}")
    width = widths.pop()
    if width < 4 or (width - 1) % 3:
        raise ActionError(f"{path}: expected 1 + 3 C columns (t, x, y, z per contact), got {width}")
    table = np.array(rows, dtype=np.float64)
    return table[:, 0], table[:, 1:].reshape(len(table), -1, 3)


def _read_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path) as data:
            times, positions = np.asarray(data["times"], dtype=np.float64), np.asarray(data["positions"],
                                                                                      dtype=np.float64)
    except KeyError as exc:
        raise ActionError(f"{path}: a drag path .npz needs arrays 'times' and 'positions' ({exc})") from None
    except (OSError, ValueError) as exc:
        raise ActionError(f"{path}: cannot read drag path: {exc}") from None
    if positions.ndim == 2:
        positions = positions[:, None, :]
    if times.ndim != 1 or positions.ndim != 3 or positions.shape[0] != times.size or positions.shape[2] != 3:
        raise ActionError(f"{path}: times must be (P,) and positions (P, C, 3), got {times.shape} and "
                          f"{positions.shape}")
    return times, positions


def read_drag_path(path) -> tuple[np.ndarray, np.ndarray]:
    """(times (P,), positions (P, C, 3)) from a .csv/.txt or .npz drag path file (format above)."""
    path = Path(path)
    if not path.is_file():
        raise ActionError(f"no such drag path file: {path}")
    times, positions = _read_npz(path) if path.suffix.lower() == ".npz" else _read_csv(path)
    if not (np.all(np.isfinite(times)) and np.all(np.isfinite(positions))):
        raise ActionError(f"{path}: drag path contains NaN or inf")
    if times[0] < 0 or np.any(np.diff(times) <= 0):
        raise ActionError(f"{path}: drag path times must be >= 0 and strictly increasing")
    return times, positions


def write_drag_path_csv(path, times, positions) -> Path:
    """Write a drag path (times (P,), positions (P, C, 3)) in the CSV format above."""
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    positions = np.asarray(positions, dtype=np.float64).reshape(times.size, -1, 3)
    count = positions.shape[1]
    header = "t," + ",".join(f"x{c},y{c},z{c}" for c in range(1, count + 1))
    table = np.column_stack([times, positions.reshape(times.size, -1)])
    path = Path(path)
    np.savetxt(path, table, delimiter=",", header=header, comments="", fmt="%.9g")
    return path
