"""Picture of a scan fit: the scan's points over the mesh as received, and over the fitted shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from neurok_ros.visualisation.figure_file import save_figure
from neurok_ros.visualisation.mesh_render import draw_mesh

RECEIVED_COLOUR, FITTED_COLOUR, SCAN_COLOUR = "#8a8a8a", "#4a78b5", "#d2462d"


def render_scan_fit(received: np.ndarray, fitted: np.ndarray, faces: np.ndarray, scan: np.ndarray,
                    out_path: str | Path, titles: tuple[str, str] = ("mesh as received", "fitted"),
                    max_points: int = 1500) -> Path:
    """received, fitted (n, 3) and scan (M, 3), one frame and units; writes a PNG of two panels with
    the same view and bounds, the scan (at most max_points of it, a fixed subset) drawn as dots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if len(scan) > max_points:
        scan = scan[np.random.default_rng(0).choice(len(scan), max_points, replace=False)]
    everything = np.concatenate([received, fitted, scan])
    bounds = (everything.min(axis=0), everything.max(axis=0))
    fig = plt.figure(figsize=(7.0, 3.6), dpi=100)
    for i, (shape, colour, title) in enumerate(zip((received, fitted), (RECEIVED_COLOUR, FITTED_COLOUR), titles)):
        ax = fig.add_subplot(1, 2, i + 1, projection="3d")
        ax.computed_zorder = False  # the dots stay in front of the mesh: the scan saw this side
        draw_mesh(ax, shape, faces, colour, bounds)
        ax.scatter(scan[:, 0], scan[:, 1], scan[:, 2], s=1.0, c=SCAN_COLOUR, depthshade=False, zorder=10)
        ax.set_title(title, fontsize=10)
    fig.subplots_adjust(left=0, right=1, top=0.92, bottom=0, wspace=0)
    return save_figure(fig, out_path)
