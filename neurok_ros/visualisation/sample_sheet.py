"""Contact sheet of sampled states of one mesh: the input first, then each sample."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from neurok_ros.visualisation.figure_file import save_figure
from neurok_ros.visualisation.mesh_render import draw_mesh

INPUT_COLOUR, SAMPLE_COLOUR = "#8a8a8a", "#4a78b5"


def render_sample_sheet(rest: np.ndarray, samples: np.ndarray, faces: np.ndarray, out_path: str | Path,
                        columns: int = 3, titles: list[str] | None = None) -> Path:
    """rest (n, 3) and samples (S, n, 3), one frame and units; writes a PNG grid, same view and
    bounds in every cell. titles: one per sample (default "sample i")."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = [rest] + list(samples)
    names = ["input"] + (titles or [f"sample {i + 1}" for i in range(len(samples))])
    everything = np.concatenate(shapes)
    bounds = (everything.min(axis=0), everything.max(axis=0))
    rows = -(-len(shapes) // columns)
    fig = plt.figure(figsize=(3.0 * columns, 3.0 * rows), dpi=90)
    for i, (shape, name) in enumerate(zip(shapes, names)):
        ax = fig.add_subplot(rows, columns, i + 1, projection="3d")
        draw_mesh(ax, shape, faces, INPUT_COLOUR if i == 0 else SAMPLE_COLOUR, bounds)
        ax.set_title(name, fontsize=9)
    fig.subplots_adjust(left=0, right=1, top=0.95, bottom=0, wspace=0, hspace=0.1)
    return save_figure(fig, out_path)
