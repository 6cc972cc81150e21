"""Inside or outside a triangle mesh, by the generalised winding number (the IoU of metrics.py).

`inside_mesh(V, F, P)` is |w(p)| > 0.5 for every query point, w from libigl's fast winding number
(Barnes-Hut over the triangle soup: open and multi-part meshes work).

A closed surface makes this much cheaper. When every directed edge (a, b) of the faces is matched by
a reversed one (b, a) (`is_closed_surface`: the faces form a 2-cycle, as a watertight mesh, or an
assembly of watertight pieces, does), w is an integer, constant on every connected region off the
surface. Every query point inside a ball free of the surface then has the winding number of the
ball's centre. `inside_mesh` therefore sorts the points into an octree over their bounding cube: a
cell whose centre lies farther from the surface than the cell's half-diagonal is free of it, and all
its points take the centre's answer (one evaluation instead of one per point); the other cells are
split again, down to MAX_DEPTH, and what is left (the points near the surface) is evaluated point by
point. 100k uniform points in the padded box around the 10k-vertex laptop: a fifth are evaluated one
by one, and the whole pass takes a third of the point-by-point time (docs/benchmarks.md). An open
surface (a cloth) is evaluated point by point. libigl's w is an approximation, but its error is far
below the 0.5 that would flip an answer: on the 340 closed meshes of the evaluation's 200 test pairs
not one of 100k points per mesh was answered differently (docs/experiments.md, "octree IoU").
"""
from __future__ import annotations

import numpy as np

MIN_CELL_POINTS = 4  # a cell with fewer points near the surface is evaluated point by point
MAX_DEPTH = 8  # octree levels below the bounding cube: cells of 1/256 of its side at the finest
FIRST_DEPTH = 3  # the octree starts at 8^3 cells
MIN_OCTREE_POINTS = 4096  # fewer query points are evaluated point by point
FREE_MARGIN = 1.01  # a cell is free when its centre is 1 % farther than its half-diagonal from the surface


def is_closed_surface(faces) -> bool:
    """True when the (m, 3) faces form a 2-cycle: the multiset of directed edges (a, b) equals that
    of the reversed edges (b, a). Then the generalised winding number is integer off the surface."""
    F = np.asarray(faces, dtype=np.int64)
    if len(F) == 0:
        return False
    tails = F.reshape(-1)
    heads = np.roll(F, -1, axis=1).reshape(-1)
    n = int(F.max()) + 1
    return bool(np.array_equal(np.sort(tails * n + heads), np.sort(heads * n + tails)))


def winding_inside(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(q,) bool, |w| > 0.5 for (q, 3) points, evaluated point by point (float64 V, int64 F)."""
    import igl

    if len(points) == 0:
        return np.zeros(0, dtype=bool)
    return np.abs(igl.fast_winding_number(vertices, faces, np.ascontiguousarray(points, dtype=np.float64))) > 0.5


def surface_distance(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(q,) unsigned distance of (q, 3) points to the mesh surface, same units."""
    import igl

    squared = igl.point_mesh_squared_distance(np.ascontiguousarray(points, dtype=np.float64), vertices, faces)[0]
    return np.sqrt(squared)


def free_cell_answers(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(q,) bool inside answers for (q, 3) points of a CLOSED surface: points in surface-free octree
    cells take their cell centre's answer; the rest are evaluated point by point (module docstring).
    Every winding number is computed in one call: each call rebuilds libigl's tree (0.05-0.1 s here)."""
    low = points.min(axis=0)
    side = float((points.max(axis=0) - low).max()) or 1.0
    pending = np.arange(len(points))
    queries, owners = [], []  # what is evaluated: free cell centres and single points, and whom it answers
    for depth in range(FIRST_DEPTH, MAX_DEPTH + 1):
        cells = 2**depth
        size = side / cells
        index = np.clip(np.floor((points[pending] - low) / size).astype(np.int64), 0, cells - 1)
        keys = (index[:, 0] * cells + index[:, 1]) * cells + index[:, 2]
        _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        crowded = np.flatnonzero(counts >= MIN_CELL_POINTS)
        centres = low + (index[first[crowded]] + 0.5) * size
        free = crowded[surface_distance(vertices, faces, centres) > FREE_MARGIN * 0.5 * np.sqrt(3.0) * size]
        held = np.split(pending[np.argsort(inverse, kind="stable")], np.cumsum(counts)[:-1])
        queries.append(low + (index[first[free]] + 0.5) * size)
        owners.extend(held[cell] for cell in free)
        settled = np.zeros(len(counts), dtype=bool)
        settled[free] = True
        if depth < MAX_DEPTH:  # cells too sparse to share an evaluation: their points are evaluated alone
            settled[counts < MIN_CELL_POINTS] = True
            alone = pending[(counts < MIN_CELL_POINTS)[inverse]]
        else:
            alone = pending[~settled[inverse]]
        queries.append(points[alone])
        owners.extend(alone[:, None])
        pending = pending[~settled[inverse]]
        if len(pending) == 0:
            break
    answers = winding_inside(vertices, faces, np.concatenate(queries))
    inside = np.zeros(len(points), dtype=bool)
    inside[np.concatenate(owners)] = np.repeat(answers, [len(held) for held in owners])
    return inside


def inside_mesh(vertices, faces, points) -> np.ndarray:
    """(q,) bool: |generalised winding number| > 0.5 for (q, 3) points (mesh frame).

    The absolute value makes consistently inward-oriented meshes work as well as outward ones. A closed
    surface is answered through surface-free octree cells (module docstring), an open one point by point."""
    V = np.ascontiguousarray(vertices, dtype=np.float64)
    F = np.ascontiguousarray(faces, dtype=np.int64)
    P = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    if len(P) < MIN_OCTREE_POINTS or not is_closed_surface(F):
        return winding_inside(V, F, P)
    return free_cell_answers(V, F, P)
