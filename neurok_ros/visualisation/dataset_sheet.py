"""Contact sheet of a dataset: for one instance per category, the rest pose and three frames."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from neurok_ros.data.dataset_check import read_manifest
from neurok_ros.data.instance_format import load_instance
from neurok_ros.visualisation.figure_file import save_figure
from neurok_ros.visualisation.mesh_render import draw_mesh

KIND_COLOURS = {"articulated": "#6f9fd8", "elastic": "#e0a050", "cloth": "#7cc47c"}


def render_contact_sheet(root: str | Path, out_path: str | Path, per_category: int = 1, seed: int = 0) -> Path:
    """Write a PNG: one row per sampled instance (rest, then frames at 1/3, 2/3 and the end)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    root = Path(root)
    manifest = read_manifest(root)
    rng = np.random.default_rng(seed)
    names = []
    for category in sorted(manifest["categories"]):
        count = manifest["categories"][category]["count"]
        for index in sorted(rng.choice(count, size=min(per_category, count), replace=False)):
            names.append(f"{category}_{index:04d}.npz")
    fig = plt.figure(figsize=(8, 2.0 * len(names)), dpi=80)
    for row, name in enumerate(names):
        inst = load_instance(root / name)
        T = inst.num_frames
        poses = [inst.rest_vertices] + [inst.frames[i] for i in (T // 3, 2 * T // 3, T - 1)]
        titles = ["rest"] + [f"t={inst.times[i]:.2f}s" for i in (T // 3, 2 * T // 3, T - 1)]
        stacked = np.concatenate(poses)
        bounds = (stacked.min(axis=0), stacked.max(axis=0))
        for col, (pose, title) in enumerate(zip(poses, titles)):
            ax = fig.add_subplot(len(names), 4, row * 4 + col + 1, projection="3d")
            draw_mesh(ax, pose, inst.faces, KIND_COLOURS.get(inst.kind, "#999999"), bounds)
            ax.set_title(f"{inst.category}  {title}" if col == 0 else title, fontsize=8)
    fig.subplots_adjust(left=0, right=1, top=0.98, bottom=0.01, wspace=0, hspace=0.15)
    return save_figure(fig, out_path)
