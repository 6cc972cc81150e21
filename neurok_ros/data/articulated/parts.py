"""Closed triangle meshes of primitive shapes for procedural articulated objects.

Every builder returns (V, F): V (n, 3) float64, metres, object frame; F (m, 3) int64. Faces are
counter-clockwise seen from outside (outward normals) and every edge is shared by exactly two faces,
so each result is a closed, consistently oriented (watertight) surface. Results of `merge` are unions
of closed components: still watertight per component, possibly overlapping each other.
"""
from __future__ import annotations

import functools

import numpy as np

Mesh = tuple[np.ndarray, np.ndarray]


# ----------------------------------------------------------------------------------------------
# Frames and transforms
# ----------------------------------------------------------------------------------------------
def frame_for_axis(axis) -> np.ndarray:
    """(3, 3) rotation whose third column is the unit `axis` (maps local z onto `axis`)."""
    z = np.asarray(axis, float)
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z], axis=1)


def rotation(axis, angle: float) -> np.ndarray:
    """(3, 3) rotation by `angle` radians about the unit direction `axis` (right-hand rule)."""
    k = np.asarray(axis, float)
    k = k / np.linalg.norm(k)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


def transform(mesh: Mesh, R=None, t=(0.0, 0.0, 0.0)) -> Mesh:
    """Rigidly move a mesh: x -> R x + t. A proper rotation keeps the orientation outward."""
    V, F = mesh
    if R is not None:
        V = V @ np.asarray(R, float).T
    return V + np.asarray(t, float), F


def merge(*meshes: Mesh) -> Mesh:
    """Concatenate meshes into one vertex/face list (components stay separate)."""
    vertices, faces, offset = [], [], 0
    for V, F in meshes:
        vertices.append(V)
        faces.append(F + offset)
        offset += len(V)
    return np.concatenate(vertices), np.concatenate(faces).astype(np.int64)


# ----------------------------------------------------------------------------------------------
# Boxes
# ----------------------------------------------------------------------------------------------
def box(extents, center=(0.0, 0.0, 0.0), max_edge: float | None = None, taper=(1.0, 1.0),
        max_divisions: int = 12) -> Mesh:
    """Axis-aligned box of size `extents` (3,) metres centred at `center`.

    max_edge: subdivide each side into a regular grid with cells no longer than this (capped at
    `max_divisions` per axis), so large flat panels carry vertices for surface sampling.
    taper: (sx, sy) scale of the top face relative to the bottom (a frustum-like tapered box).
    """
    ext = np.asarray(extents, float)
    if max_edge is None:
        counts = (1, 1, 1)
    else:
        counts = tuple(int(c) for c in np.clip(np.ceil(ext / max_edge - 1e-9), 1, max_divisions))
    unit, F = _unit_box(counts)
    V = (unit - 0.5) * ext
    if taper[0] != 1.0 or taper[1] != 1.0:
        s = V[:, 2] / ext[2] + 0.5  # 0 at the bottom, 1 at the top
        V[:, 0] *= 1 + (taper[0] - 1) * s
        V[:, 1] *= 1 + (taper[1] - 1) * s
    return V + np.asarray(center, float), F.copy()


@functools.lru_cache(maxsize=256)
def _unit_box(counts: tuple[int, int, int]) -> Mesh:
    """Surface grid of the unit cube [0, 1]^3 with counts (nx, ny, nz) cells: V (n, 3), F (m, 3) int64."""
    counts = np.asarray(counts)
    grid = np.stack(np.meshgrid(*[np.arange(c + 1) for c in counts], indexing="ij"), axis=-1)
    on_surface = (grid == 0).any(-1) | (grid == counts).any(-1)
    index = np.full(grid.shape[:3], -1, np.int64)
    index[on_surface] = np.arange(on_surface.sum())
    faces = []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3  # e_b x e_c = e_a
        ib, ic = np.meshgrid(np.arange(counts[b]), np.arange(counts[c]), indexing="ij")
        ib, ic = ib.ravel(), ic.ravel()
        for side in (0, counts[a]):
            corners = []
            for db, dc in ((0, 0), (1, 0), (1, 1), (0, 1)):
                coord = np.empty((len(ib), 3), np.int64)
                coord[:, a] = side
                coord[:, b] = ib + db
                coord[:, c] = ic + dc
                corners.append(index[coord[:, 0], coord[:, 1], coord[:, 2]])
            q0, q1, q2, q3 = corners if side else corners[::-1]
            faces.append(np.stack([q0, q1, q2], 1))
            faces.append(np.stack([q0, q2, q3], 1))
    V = grid[on_surface] / counts
    V.flags.writeable = False
    F = np.concatenate(faces)
    F.flags.writeable = False
    return V, F


def box_between(lo, hi, max_edge: float | None = None) -> Mesh:
    """Axis-aligned box spanning the corners `lo` (3,) and `hi` (3,), metres."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return box(hi - lo, (lo + hi) / 2, max_edge=max_edge)


def open_box(extents, center, wall: float, open_side: str, max_edge: float | None = None,
             floor: float | None = None) -> Mesh:
    """Hollow box made of five non-overlapping wall panels (closed boxes), missing the face `open_side`.

    open_side: one of "+x" "-x" "+y" "-y" "+z" "-z". wall: panel thickness, metres; floor: thickness
    of the panel opposite the opening (defaults to `wall`).
    """
    ext = np.asarray(extents, float)
    lo = np.asarray(center, float) - ext / 2
    hi = lo + ext
    o = "xyz".index(open_side[1])
    a1, a2 = [a for a in range(3) if a != o]
    floor = wall if floor is None else floor
    panels = []
    f_lo, f_hi = lo.copy(), hi.copy()
    if open_side[0] == "+":
        f_hi[o] = lo[o] + floor
        w_lo, w_hi = lo[o] + floor, hi[o]
    else:
        f_lo[o] = hi[o] - floor
        w_lo, w_hi = lo[o], hi[o] - floor
    panels.append(box_between(f_lo, f_hi, max_edge))
    for a, b, inset in ((a1, a2, 0.0), (a2, a1, wall)):
        for side in (0, 1):
            p_lo, p_hi = lo.copy(), hi.copy()
            p_lo[o], p_hi[o] = w_lo, w_hi
            p_lo[b] += inset
            p_hi[b] -= inset
            if side == 0:
                p_hi[a] = lo[a] + wall
            else:
                p_lo[a] = hi[a] - wall
            panels.append(box_between(p_lo, p_hi, max_edge))
    return merge(*panels)


# ----------------------------------------------------------------------------------------------
# Surfaces of revolution, tubes, extrusions
# ----------------------------------------------------------------------------------------------
def lathe(radii, heights, sections: int = 20, axis=(0.0, 0.0, 1.0), base=(0.0, 0.0, 0.0)) -> Mesh:
    """Closed solid of revolution of the profile (radii[i], heights[i]), i = 0..k-1, all radii > 0.

    The profile runs from bottom (heights[0]) to top (heights[-1]) along `axis` starting at `base`;
    both ends are capped with a fan around a centre vertex.
    """
    r = np.asarray(radii, float)
    h = np.asarray(heights, float)
    angle = np.linspace(0.0, 2 * np.pi, sections, endpoint=False)
    ring = np.stack([np.cos(angle), np.sin(angle)], 1)  # (s, 2)
    k = len(r)
    V = np.empty((k * sections + 2, 3))
    V[: k * sections, :2] = (r[:, None, None] * ring[None]).reshape(-1, 2)
    V[: k * sections, 2] = np.repeat(h, sections)
    V[-2] = (0, 0, h[0])
    V[-1] = (0, 0, h[-1])
    F = _ring_faces(k, sections)
    j = np.arange(sections)
    j1 = (j + 1) % sections
    bottom = np.stack([np.full(sections, k * sections), j1, j], 1)
    top_ring = (k - 1) * sections
    top = np.stack([np.full(sections, k * sections + 1), top_ring + j, top_ring + j1], 1)
    return transform((V, np.concatenate([F, bottom, top])), frame_for_axis(axis), base)


def cylinder(radius: float, length: float, sections: int = 20, axis=(0.0, 0.0, 1.0),
             center=(0.0, 0.0, 0.0), segments: int = 1) -> Mesh:
    """Closed cylinder (or disk when short) of `length` along `axis`, centred at `center`."""
    heights = np.linspace(-length / 2, length / 2, segments + 1)
    return lathe(np.full(segments + 1, radius), heights, sections, axis, center)


def frustum(radius_bottom: float, radius_top: float, length: float, sections: int = 20,
            axis=(0.0, 0.0, 1.0), base=(0.0, 0.0, 0.0)) -> Mesh:
    """Closed truncated cone from `base` along `axis`; both radii > 0."""
    return lathe([radius_bottom, radius_top], [0.0, length], sections, axis, base)


def tube(path, radius: float, sections: int = 10, closed: bool = False) -> Mesh:
    """Closed tube of circular cross-section swept along the polyline `path` (k, 3), metres.

    Cross-sections are carried along by parallel transport. Open paths get flat end caps;
    closed=True joins the last ring to the first (a loop, e.g. a ring handle).
    """
    P = np.asarray(path, float)
    k = len(P)
    if closed:
        tangents = np.roll(P, -1, 0) - np.roll(P, 1, 0)
    else:
        tangents = np.gradient(P, axis=0)
    tangents /= np.linalg.norm(tangents, axis=1, keepdims=True)
    u = np.empty((k, 3))
    u[0] = frame_for_axis(tangents[0])[:, 0]
    for i in range(1, k):
        v = u[i - 1] - tangents[i] * (u[i - 1] @ tangents[i])
        u[i] = v / np.linalg.norm(v)
    w = np.cross(tangents, u)  # u x w = tangent: rings run counter-clockwise about the tangent
    angle = np.linspace(0.0, 2 * np.pi, sections, endpoint=False)
    V = (P[:, None] + radius * (np.cos(angle)[None, :, None] * u[:, None]
                                + np.sin(angle)[None, :, None] * w[:, None])).reshape(-1, 3)
    F = _ring_faces(k + 1 if closed else k, sections) % (k * sections)
    if closed:
        return V, F
    j = np.arange(sections)
    j1 = (j + 1) % sections
    last = (k - 1) * sections
    V = np.concatenate([V, P[:1], P[-1:]])
    start = np.stack([np.full(sections, k * sections), j1, j], 1)
    end = np.stack([np.full(sections, k * sections + 1), last + j, last + j1], 1)
    return V, np.concatenate([F, start, end])


def torus(major_radius: float, minor_radius: float, major_sections: int = 20, minor_sections: int = 8,
          axis=(0.0, 0.0, 1.0), center=(0.0, 0.0, 0.0), scale=(1.0, 1.0)) -> Mesh:
    """Closed ring about `axis`; scale (sx, sy) stretches the centre line into an ellipse."""
    angle = np.linspace(0.0, 2 * np.pi, major_sections, endpoint=False)
    path = np.stack([scale[0] * major_radius * np.cos(angle), scale[1] * major_radius * np.sin(angle),
                     np.zeros_like(angle)], 1)
    return transform(tube(path, minor_radius, minor_sections, closed=True), frame_for_axis(axis), center)


def extrude(polygon, thickness: float, center_z: float = 0.0) -> Mesh:
    """Closed prism: a convex counter-clockwise polygon (k, 2) in xy extruded along z by `thickness`."""
    P = np.asarray(polygon, float)
    k = len(P)
    z0, z1 = center_z - thickness / 2, center_z + thickness / 2
    V = np.concatenate([np.column_stack([P, np.full(k, z0)]), np.column_stack([P, np.full(k, z1)])])
    i = np.arange(k)
    i1 = (i + 1) % k
    sides = np.concatenate([np.stack([i, i1, k + i1], 1), np.stack([i, k + i1, k + i], 1)])
    fan = np.arange(1, k - 1)
    bottom = np.stack([np.zeros_like(fan), fan + 1, fan], 1)
    top = np.stack([np.full_like(fan, k), k + fan, k + fan + 1], 1)
    return V, np.concatenate([sides, bottom, top]).astype(np.int64)


def _ring_faces(rings: int, sections: int) -> np.ndarray:
    """Quads between consecutive rings of `sections` vertices, oriented outward; (2 s (r-1), 3)."""
    i, j = np.meshgrid(np.arange(rings - 1), np.arange(sections), indexing="ij")
    i, j = i.ravel(), j.ravel()
    j1 = (j + 1) % sections
    a, b = i * sections + j, i * sections + j1
    c, d = (i + 1) * sections + j1, (i + 1) * sections + j
    return np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)]).astype(np.int64)


# ----------------------------------------------------------------------------------------------
# Handles and knobs
# ----------------------------------------------------------------------------------------------
def bar_handle(length: float, standoff: float, radius: float, mount=(0.0, 0.0, 0.0), along=(0, 0, 1),
               out=(0, -1, 0), sections: int = 8, corner_steps: int = 3) -> Mesh:
    """U-shaped pull handle: one tube from the mounting surface out, along, and back.

    The two feet sit `length` apart (centred on `mount`) on the line `along`; the grip bar runs at
    distance `standoff` from the surface in direction `out` (unit, the surface's outward normal).
    """
    along = np.asarray(along, float) / np.linalg.norm(along)
    out = np.asarray(out, float) / np.linalg.norm(out)
    bend = min(standoff * 0.6, length * 0.3)
    theta = np.linspace(0.0, np.pi / 2, corner_steps + 2)[1:-1]
    half = length / 2
    pts = [(-half, 0.0), (-half, standoff - bend)]
    pts += [(-half + bend * (1 - np.cos(a)), standoff - bend + bend * np.sin(a)) for a in theta]
    pts += [(-half + bend, standoff), (half - bend, standoff)]
    pts += [(half - bend + bend * np.sin(a), standoff - bend + bend * np.cos(a)) for a in theta]
    pts += [(half, standoff - bend), (half, 0.0)]
    pts = np.asarray(pts)
    path = np.asarray(mount, float) + pts[:, :1] * along + pts[:, 1:] * out
    return tube(path, radius, sections)


def knob(radius: float, depth: float, mount=(0.0, 0.0, 0.0), out=(0, -1, 0), sections: int = 16,
         pointer: bool = True) -> Mesh:
    """Round knob standing `depth` out of a surface along `out`; an optional pointer fin shows rotation."""
    r = radius
    stem = lathe([0.45 * r, 0.45 * r, r, r, 0.85 * r], [0.0, 0.3 * depth, 0.35 * depth, 0.9 * depth, depth],
                 sections, out, mount)
    if not pointer:
        return stem
    R = frame_for_axis(out)
    fin = box((0.25 * r, 1.6 * r, 0.5 * depth), (0.0, 0.25 * r, 0.0))
    fin = transform(fin, R, np.asarray(mount, float) + R[:, 2] * (depth + 0.15 * depth))
    return merge(stem, fin)
