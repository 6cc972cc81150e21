"""The directions a manufactured object is built along: the normals of its flat panels.

    directions = planar_directions(vertices, faces)      # (k, 3), largest panels first

A cabinet's vertex principal directions lean toward wherever its vertices crowd (a handle's dense
fillets tilt them by 9 degrees on a LIBERO cabinet); the normals of its panels do not. The faces'
unit normals are grouped, sign-free, around the largest remaining face: those within
`cluster_degrees` of it are one group, whose direction is the principal direction of their
area-weighted normals. A group that carries at least `min_share` of the surface area is a panel
direction, unless faces turned between `cluster_degrees` and SHOULDER_DEGREES from it carry half
its area or more: then it is a facet of a curved surface (a 10-sided cylinder's sides, 36 degrees
apart), not a panel with edges. A curved surface (a cylinder's side, a sphere) gives none; a
cylinder's caps give its axis.
"""
from __future__ import annotations

import numpy as np

MAX_DIRECTIONS = 6
SHOULDER_DEGREES = 45.0
MAX_SEEDS = 48  # groups tried: a curved surface's normals would make one per face


def planar_directions(vertices: np.ndarray, faces: np.ndarray, cluster_degrees: float = 5.0,
                      min_share: float = 0.05) -> np.ndarray:
    """(k, 3) unit directions (k <= MAX_DIRECTIONS, sign-free) of the panels of the mesh (vertices
    (n, 3), faces (m, 3)), those with the most area first; (0, 3) when no panel is large enough."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    cross = np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]], vertices[faces[:, 2]] - vertices[faces[:, 0]])
    areas = np.linalg.norm(cross, axis=1)
    total = float(areas.sum())
    if total <= 0:
        return np.zeros((0, 3))
    usable = areas > 0
    normals, areas = cross[usable] / areas[usable, None], areas[usable]
    cosine = np.cos(np.radians(cluster_degrees))
    remaining = np.ones(len(areas), dtype=bool)
    directions = []
    for _ in range(MAX_SEEDS):
        if not remaining.any() or len(directions) == MAX_DIRECTIONS or areas[remaining].sum() < min_share * total:
            break
        seed = normals[np.flatnonzero(remaining)[np.argmax(areas[remaining])]]
        group = remaining & (np.abs(normals @ seed) >= cosine)
        weighted = normals[group] * np.sqrt(areas[group])[:, None]
        direction = np.linalg.eigh(weighted.T @ weighted)[1][:, -1]
        alignment = np.abs(normals @ direction)
        group = remaining & (alignment >= cosine)
        remaining &= ~group
        shoulder = areas[(alignment < cosine) & (alignment >= np.cos(np.radians(SHOULDER_DEGREES)))].sum()
        if areas[group].sum() >= min_share * total and shoulder < 0.5 * areas[group].sum():
            directions.append((float(areas[group].sum()), direction))
    directions.sort(key=lambda item: -item[0])
    return np.array([direction for _, direction in directions]).reshape(-1, 3)
