"""Simulation meshes for flexes: tetrahedralised grids (dim=3), triangulated sheets (dim=2), the
maps that bend a grid into a ball or a round rod, and the boundary surface of a tetrahedral mesh.

Every function is plain numpy; points are (n, 3) float64 in metres, elements are int64 index arrays.
"""
from __future__ import annotations

import itertools

import numpy as np


def grid_points(count, size) -> np.ndarray:
    """Regular grid of count = (nx, ny, nz) points filling a box of size (3,) metres centred at 0.

    Returns (nx*ny*nz, 3), z varying fastest, then y, then x (point id = (i*ny + j)*nz + k).
    """
    axes = [np.linspace(-0.5 * s, 0.5 * s, c) if c > 1 else np.zeros(1) for c, s in zip(count, size)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    return grid.reshape(-1, 3)


def grid_tetrahedra(count) -> np.ndarray:
    """Kuhn (Freudenthal) tetrahedralisation of a (nx, ny, nz) point grid: 6 tets per cell.

    Every cell is cut along the same main diagonal, so neighbouring cells share faces exactly
    (a conforming mesh). Returns (6*(nx-1)*(ny-1)*(nz-1), 4) point ids as laid out by `grid_points`.
    """
    nx, ny, nz = count
    ids = np.arange(nx * ny * nz).reshape(nx, ny, nz)
    corners = np.stack(np.meshgrid(np.arange(nx - 1), np.arange(ny - 1), np.arange(nz - 1), indexing="ij"),
                       axis=-1).reshape(-1, 3)
    tets = []
    for order in itertools.permutations(range(3)):
        path = [corners]
        step = corners.copy()
        for axis in order:
            step = step.copy()
            step[:, axis] += 1
            path.append(step)
        tets.append(np.stack([ids[p[:, 0], p[:, 1], p[:, 2]] for p in path], axis=1))
    return np.concatenate(tets, axis=0).astype(np.int64)


def sheet_points(count, size) -> np.ndarray:
    """Flat (nu, nv) grid in the local xy plane, size (2,) metres, centred at 0; v varies fastest.

    Returns (nu*nv, 3) with z = 0; point id = i*nv + j for u index i and v index j.
    """
    nu, nv = count
    u = np.linspace(-0.5 * size[0], 0.5 * size[0], nu)
    v = np.linspace(-0.5 * size[1], 0.5 * size[1], nv)
    uu, vv = np.meshgrid(u, v, indexing="ij")
    return np.stack([uu.ravel(), vv.ravel(), np.zeros(nu * nv)], axis=-1)


def sheet_triangles(count) -> np.ndarray:
    """Triangles of a (nu, nv) sheet grid, counter-clockwise seen from +z, diagonals alternating
    cell by cell so the sheet has no preferred shear direction. Returns (2*(nu-1)*(nv-1), 3)."""
    nu, nv = count
    i, j = np.meshgrid(np.arange(nu - 1), np.arange(nv - 1), indexing="ij")
    i, j = i.ravel(), j.ravel()
    a = i * nv + j            # (i, j)
    b = (i + 1) * nv + j      # (i+1, j)
    c = (i + 1) * nv + j + 1  # (i+1, j+1)
    d = i * nv + j + 1        # (i, j+1)
    even = (i + j) % 2 == 0
    first = np.where(even[:, None], np.stack([a, b, c], 1), np.stack([a, b, d], 1))
    second = np.where(even[:, None], np.stack([a, c, d], 1), np.stack([b, c, d], 1))
    return np.concatenate([first, second], axis=0).astype(np.int64)


def sheet_corner_pinch(count, corner: int) -> list[int]:
    """Ids of a sheet corner point and its two edge neighbours (what a clothes peg or a gripper
    holds), for a (nu, nv) sheet laid out by `sheet_points`. Corners 0..3 go counter-clockwise
    from (-u, -v): 0 (-u, -v), 1 (+u, -v), 2 (+u, +v), 3 (-u, +v)."""
    nu, nv = count
    i, j = [(0, 0), (nu - 1, 0), (nu - 1, nv - 1), (0, nv - 1)][corner]
    di, dj = (1 if i == 0 else -1), (1 if j == 0 else -1)
    return [i * nv + j, (i + di) * nv + j, i * nv + j + dj]


def cube_to_ball(points: np.ndarray) -> np.ndarray:
    """Smooth one-to-one map of the cube [-1, 1]^3 onto the unit ball; (n, 3) -> (n, 3).

    The cube's surface goes to the sphere, so a tetrahedralised grid becomes a tetrahedralised ball.
    """
    x, y, z = points[:, 0], points[:, 1], points[:, 2]
    x2, y2, z2 = x * x, y * y, z * z
    return np.stack([
        x * np.sqrt(np.maximum(1 - y2 / 2 - z2 / 2 + y2 * z2 / 3, 0.0)),
        y * np.sqrt(np.maximum(1 - z2 / 2 - x2 / 2 + z2 * x2 / 3, 0.0)),
        z * np.sqrt(np.maximum(1 - x2 / 2 - y2 / 2 + x2 * y2 / 3, 0.0)),
    ], axis=-1)


def square_to_disc(points: np.ndarray) -> np.ndarray:
    """Map the x, y square [-1, 1]^2 onto the unit disc, z unchanged; (n, 3) -> (n, 3)."""
    x, y = points[:, 0], points[:, 1]
    out = points.copy()
    out[:, 0] = x * np.sqrt(1 - y * y / 2)
    out[:, 1] = y * np.sqrt(1 - x * x / 2)
    return out


def tetrahedra_boundary(tets: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Boundary triangles of a tetrahedral mesh, oriented with outward normals.

    tets (m, 4) point ids, points (n, 3). A face is on the boundary when exactly one tet has it.
    Returns (F, 3) point ids, in a deterministic order.
    """
    opposite = [(1, 2, 3, 0), (0, 3, 2, 1), (0, 1, 3, 2), (0, 2, 1, 3)]
    faces = np.concatenate([tets[:, list(o[:3])] for o in opposite], axis=0)
    apex = np.concatenate([tets[:, o[3]] for o in opposite], axis=0)
    key = np.sort(faces, axis=1)
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    keep = counts[inverse.ravel()] == 1
    faces, apex = faces[keep], apex[keep]
    p0, p1, p2 = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    normal = np.cross(p1 - p0, p2 - p0)
    inward = np.einsum("ij,ij->i", normal, points[apex] - p0) > 0
    faces[inward] = faces[inward][:, [0, 2, 1]]
    order = np.lexsort(np.sort(faces, axis=1).T[::-1])
    return faces[order].astype(np.int64)


def rotation_matrix(axis, angle: float) -> np.ndarray:
    """Rotation by `angle` radians about `axis` (3,); returns (3, 3)."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)
