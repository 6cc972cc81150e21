"""GIF of a mesh moving over time, rendered headless."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from neurok_ros.visualisation.mesh_render import draw_mesh, shaded_triangles


def render_gif(frames: np.ndarray, faces: np.ndarray, out_path: str | Path, fps: float = 15.0,
               colour: str = "#6f9fd8", size_px: int = 360, times: np.ndarray | None = None,
               max_faces: int = 6000) -> Path:
    """Render frames (T, n, 3) of a mesh with faces (m, 3) to an animated GIF at `fps`.

    Meshes with more than `max_faces` faces are drawn with an evenly strided subset of faces, which
    keeps a 10k-vertex mesh at a few tens of milliseconds per frame.
    """
    import imageio.v2 as imageio
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = np.asarray(frames, dtype=np.float64)
    faces = np.asarray(faces)
    if len(faces) > max_faces:
        faces = faces[np.linspace(0, len(faces) - 1, max_faces).astype(int)]
    bounds = (frames.reshape(-1, 3).min(axis=0), frames.reshape(-1, 3).max(axis=0))
    fig = plt.figure(figsize=(size_px / 80, size_px / 80), dpi=80)
    ax = fig.add_subplot(projection="3d")
    fig.subplots_adjust(0, 0, 1, 1)
    collection = draw_mesh(ax, frames[0], faces, colour, bounds)
    label = fig.text(0.03, 0.95, "", fontsize=9)
    images = []
    for t, vertices in enumerate(frames):
        triangles, colours = shaded_triangles(vertices, faces, colour)
        collection.set_verts(triangles)
        collection.set_facecolor(colours)
        if times is not None:
            label.set_text(f"t = {times[t]:.2f} s")
        fig.canvas.draw()
        images.append(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy())
    plt.close(fig)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    imageio.mimsave(out_path, images, duration=1000.0 / fps, loop=0)
    return out_path
