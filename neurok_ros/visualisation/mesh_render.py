"""Flat-shaded, headless matplotlib rendering of triangle meshes."""
from __future__ import annotations

import numpy as np

LIGHT_DIRECTION = np.array([0.4, -0.5, 0.77]) / np.linalg.norm([0.4, -0.5, 0.77])


def hex_to_rgb(colour: str) -> np.ndarray:
    """"#rrggbb" -> (3,) float in [0, 1]."""
    return np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])


def shaded_triangles(vertices: np.ndarray, faces: np.ndarray, colour: str) -> tuple[np.ndarray, np.ndarray]:
    """Triangles (m, 3, 3) and their two-sided Lambert colours (m, 3)."""
    triangles = vertices[faces]
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True) + 1e-12
    shade = 0.35 + 0.65 * np.abs(normals @ LIGHT_DIRECTION)
    return triangles, shade[:, None] * hex_to_rgb(colour)


def set_equal_bounds(ax, lo: np.ndarray, hi: np.ndarray) -> None:
    """Cubic axis limits around the box [lo, hi] (3,) so shapes are not distorted."""
    centre, half = (lo + hi) / 2, max(float((hi - lo).max()) / 2, 1e-9)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))


def draw_mesh(ax, vertices: np.ndarray, faces: np.ndarray, colour: str, bounds: tuple,
              elevation: float = 22, azimuth: float = -60):
    """Add a flat-shaded mesh to a 3D axis. vertices (n, 3), faces (m, 3), bounds (lo (3,), hi (3,)).
    Returns the Poly3DCollection so animations can update it."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    triangles, colours = shaded_triangles(vertices, faces, colour)
    collection = Poly3DCollection(triangles, facecolors=colours, linewidths=0)
    ax.add_collection3d(collection)
    set_equal_bounds(ax, *bounds)
    ax.view_init(elev=elevation, azim=azimuth)
    ax.set_axis_off()
    return collection
