"""Training curves from `neurok train` logs (<checkpoint>.log.jsonl): loss and validation error."""
from __future__ import annotations

import json
from pathlib import Path

from neurok_ros.visualisation.figure_file import save_figure


def read_log(path: str | Path) -> tuple[list[dict], list[dict]]:
    """(training records, validation records) of one .log.jsonl file."""
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [r for r in records if "loss" in r], [r for r in records if "val_loss" in r]


def plot_training_curves(logs: dict[str, str | Path], out_path: str | Path,
                         offsets: dict[str, int] | None = None) -> Path:
    """One PNG with the training loss and the validation point error (normalised units) of each
    named log; offsets shift a log's steps (a second stage continuing another run)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    for name, path in logs.items():
        shift = (offsets or {}).get(name, 0)
        train, val = read_log(path)
        left.plot([r["step"] + shift for r in train], [r["loss"] for r in train], lw=0.8, label=name)
        right.plot([r["step"] + shift for r in val], [r["val_point_error"] for r in val], marker="o", ms=3, label=name)
    left.set(xlabel="step", ylabel="training loss", yscale="log", title="training loss")
    right.set(xlabel="step", ylabel="mean point error (normalised units)", title="validation point error")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out_path)
