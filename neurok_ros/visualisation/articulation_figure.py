"""Paper-style picture of an articulation: the mesh coloured by part, each joint's axis drawn on it.

Revolute joints: a thick line along the axis through its origin, spanning the moving part, with a
curved arrow turning the positive way (right-hand rule) around it. Prismatic joints: a double-headed
arrow along the axis through the moving part's centre. Two views side by side; a legend names the
parts and the joints (type, confidence). Inputs are in the mesh's own frame and units (z up).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.articulation.urdf import face_labels
from neurok_ros.visualisation.figure_file import save_figure
from neurok_ros.visualisation.mesh_render import set_equal_bounds, shaded_triangles

ROOT_COLOUR = "#a6a6a6"
PART_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
                "#17becf")  # Tableau 10 without its grey
VIEWS = ((22.0, -58.0, "front view"), (68.0, -100.0, "top view"))  # (elevation, azimuth) degrees


def part_colour(part: int) -> str:
    """"#rrggbb" of a part label: grey for the root, then a qualitative palette."""
    return ROOT_COLOUR if part == 0 else PART_COLOURS[(part - 1) % len(PART_COLOURS)]


def cluster_decimate(vertices: np.ndarray, faces: np.ndarray, max_faces: int) -> tuple[np.ndarray, np.ndarray]:
    """Vertex-clustering decimation (no dependencies, coarse) to at most max_faces triangles:
    vertices (n, 3), faces (m, 3) -> new vertices (k, 3) and faces (f, 3)."""
    if len(faces) <= max_faces:
        return vertices, faces
    lo, size = vertices.min(0), max(float(np.ptp(vertices, axis=0).max()), 1e-12)
    cells = np.sqrt(max_faces)
    while True:
        _, cluster = np.unique(np.floor((vertices - lo) * (cells / size)).astype(np.int64), axis=0,
                               return_inverse=True)
        f = cluster.reshape(-1)[faces]
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
        f = f[np.sort(np.unique(np.sort(f, axis=1), axis=0, return_index=True)[1])]
        if len(f) <= max_faces:
            break
        cells *= 0.85
    cluster = cluster.reshape(-1)
    centres = np.stack([np.bincount(cluster, vertices[:, d]) for d in range(3)], 1)
    return centres / np.bincount(cluster)[:, None], f


def part_meshes(vertices: np.ndarray, faces: np.ndarray, labels: np.ndarray, num_parts: int,
                max_faces: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each part's piece (faces by majority label) as its own (vertices, faces), decimated so that all
    together have at most about max_faces triangles (open3d quadric decimation; vertex clustering
    where that fails)."""
    from neurok_ros.errors import MeshError
    from neurok_ros.geometry.decimation import decimate_to_vertices

    owner = face_labels(faces, labels)
    pieces = []
    for part in range(num_parts):
        piece = faces[owner == part]
        used, local = np.unique(piece, return_inverse=True)
        V, F = vertices[used], local.reshape(-1, 3)
        budget = max(32, int(max_faces * len(F) / max(len(faces), 1)))
        if len(F) > budget:
            try:
                decimated = decimate_to_vertices(V, F, max(4, budget // 2))
                V, F = decimated.vertices, decimated.faces
            except MeshError:
                V, F = cluster_decimate(V, F, budget)
        pieces.append((V, F))
    return pieces


def _ancestors(part: int, parent: dict[int, int]) -> set[int]:
    """part and every part above it in the joint tree (parent: child label -> parent label)."""
    chain = {part}
    while part in parent and parent[part] not in chain:
        part = parent[part]
        chain.add(part)
    return chain


def _basis(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors e1, e2 with e1 x e2 = axis."""
    helper = np.eye(3)[np.argmin(np.abs(axis))]
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(axis, e1)


def _arrowhead(ax, tip: np.ndarray, direction: np.ndarray, eye: np.ndarray, length: float, colour: str) -> None:
    """A filled triangular head at tip pointing along direction, turned to face the camera (eye (3,))."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    direction = direction / (np.linalg.norm(direction) + 1e-12)
    side = np.cross(direction, eye)
    side = side / np.linalg.norm(side) if np.linalg.norm(side) > 1e-6 else _basis(direction)[0]
    base = tip - length * direction
    head = np.array([tip, base + 0.45 * length * side, base - 0.45 * length * side])
    ax.add_collection3d(Poly3DCollection([head], facecolors=colour, edgecolors="k", linewidths=0.8, zorder=6))


def _draw_joint(ax, joint, moved: np.ndarray, colour: str, size: float, eye: np.ndarray, number: int) -> None:
    """Overlay one joint: moved (k, 3) are the vertices it moves; size the object's extent."""
    import matplotlib.patheffects as pe

    outline = [pe.withStroke(linewidth=5.5, foreground="black")]
    axis, origin = joint.axis, joint.origin
    centre = moved.mean(0) if len(moved) else origin
    if joint.type == "revolute":
        along = (moved - origin) @ axis if len(moved) else np.zeros(1)
        t0, t1 = along.min() - 0.08 * size, along.max() + 0.08 * size
        ends = origin + np.outer([t0, t1], axis)
        ax.plot(*ends.T, color=colour, linewidth=3.5, solid_capstyle="round", path_effects=outline, zorder=5)
        _arrowhead(ax, ends[1] + 0.04 * size * axis, axis, eye, 0.06 * size, colour)
        hub = origin + np.clip((centre - origin) @ axis, t0, t1) * axis
        e1, e2 = _basis(axis)
        t = np.linspace(0.0, 1.5 * np.pi, 60)
        radius = 0.075 * size
        arc = hub + radius * (np.outer(np.cos(t), e1) + np.outer(np.sin(t), e2))
        ax.plot(*arc.T, color=colour, linewidth=2.8, path_effects=outline, zorder=5)
        _arrowhead(ax, arc[-1] + 0.03 * size * (-np.sin(t[-1]) * e1 + np.cos(t[-1]) * e2),
                   -np.sin(t[-1]) * e1 + np.cos(t[-1]) * e2, eye, 0.065 * size, colour)
        label_at = ends[1] + 0.09 * size * axis
    else:
        half = 0.5 * float(np.clip(joint.upper - joint.lower, 0.25 * size, 0.6 * size))
        ends = centre + np.outer([-half, half], axis)
        ax.plot(*ends.T, color=colour, linewidth=3.5, path_effects=outline, zorder=5)
        for end, sign in zip(ends, (-1.0, 1.0)):
            _arrowhead(ax, end + sign * 0.04 * size * axis, sign * axis, eye, 0.07 * size, colour)
        label_at = ends[1] + 0.12 * size * axis
    ax.text(*label_at, f"J{number}", fontsize=9, fontweight="bold", ha="center", va="center", zorder=7,
            bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor=colour, linewidth=1.2))


def articulation_figure(path: str | Path, vertices: np.ndarray, faces: np.ndarray, articulation: Articulation,
                        title: str | None = None, max_faces: int = 15000) -> Path:
    """Write a PNG of the mesh (vertices (n, 3), faces (m, 3)) coloured by articulation.labels, with
    every joint's axis; about max_faces triangles at most are drawn per view. Returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    vertices, faces = np.asarray(vertices, np.float64), np.asarray(faces, np.int64)
    labels = articulation.labels
    parts = range(max(articulation.num_parts, 1))
    pieces = [shaded_triangles(V, F, part_colour(p))
              for p, (V, F) in enumerate(part_meshes(vertices, faces, labels, len(parts), max_faces))]
    triangles = np.concatenate([t for t, _ in pieces])
    colours = np.concatenate([c for _, c in pieces])
    lo, hi = vertices.min(0), vertices.max(0)
    size = float((hi - lo).max())
    parent = {j.child: j.parent for j in articulation.joints}
    chains = [_ancestors(p, parent) for p in parts]

    fig = plt.figure(figsize=(10.0, 5.2), dpi=110)
    for i, (elevation, azimuth, view_name) in enumerate(VIEWS):
        ax = fig.add_subplot(1, 2, i + 1, projection="3d")
        ax.computed_zorder = False  # joint overlays stay in front of the mesh
        ax.add_collection3d(Poly3DCollection(triangles, facecolors=colours, linewidths=0, zorder=1))
        set_equal_bounds(ax, lo - 0.12 * size, hi + 0.12 * size)
        ax.set_box_aspect((1, 1, 1), zoom=1.4)
        ax.view_init(elev=elevation, azim=azimuth)
        ax.set_axis_off()
        e, a = np.radians(elevation), np.radians(azimuth)
        eye = np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
        for number, joint in enumerate(articulation.joints, 1):
            moved = vertices[np.isin(labels, [p for p in parts if joint.child in chains[p]])]
            _draw_joint(ax, joint, moved, part_colour(joint.child), size, eye, number)
        ax.text2D(0.5, 0.02, view_name, transform=ax.transAxes, ha="center", fontsize=10, color="0.3")

    names = [articulation.part_names[p] if p < len(articulation.part_names) else f"part_{p}" for p in parts]
    part_handles = [Patch(facecolor=part_colour(p), edgecolor="k", linewidth=0.5, label=names[p]) for p in parts]
    joint_handles = [Line2D([], [], color=part_colour(j.child), linewidth=3.5,
                            label=f"J{n} {j.name}: {j.type}, conf {j.confidence:.2f}")
                     for n, j in enumerate(articulation.joints, 1)]
    part_rows, joint_rows = -(-len(part_handles) // 6), -(-len(joint_handles) // 3)
    line = 0.042  # legend row height, figure fraction
    fig.legend(handles=part_handles, loc="lower center", bbox_to_anchor=(0.5, 0.01 + line * joint_rows),
               ncol=min(len(part_handles), 6), fontsize=9, frameon=False, title="parts", title_fontsize=9)
    if joint_handles:
        fig.legend(handles=joint_handles, loc="lower center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(len(joint_handles), 3), fontsize=9, frameon=False)
    if title:
        fig.suptitle(title, fontsize=12)
    fig.subplots_adjust(left=0, right=1, top=0.91 if title else 0.96,
                        bottom=0.05 + line * (part_rows + joint_rows + 1), wspace=0)
    return save_figure(fig, path)
