"""Mesh validation, cleaning and vertex welding.

Arrays: vertices V (n, 3) float64 in the mesh's own frame and units; faces F (m, 3) int64 indices
into V. Cleaning never reorders what it keeps: surviving faces and vertices stay in input order,
and index maps tie every output element back to the input.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.errors import MeshError

# A face whose doubled area is below this fraction of the squared bounding-box diagonal has zero
# area up to float64 round-off of the cross product.
_ZERO_AREA_RELATIVE = 1e-14


def validate_mesh_arrays(vertices, faces) -> tuple[np.ndarray, np.ndarray]:
    """Check a triangle mesh and return it as (V (n, 3) float64, F (m, 3) int64).

    Raises MeshError with a one-line reason for: no vertices or no faces, wrong shapes,
    non-finite vertex coordinates (naming the first bad vertex), non-integer, negative or
    out-of-range face indices (naming the index and the vertex count).
    """
    try:
        V = np.asarray(vertices, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MeshError(f"vertices are not numeric: {exc}") from None
    F_raw = np.asarray(faces)
    if V.size == 0:
        raise MeshError("empty mesh: no vertices")
    if F_raw.size == 0:
        raise MeshError("empty mesh: no faces (no triangles)")
    if V.ndim != 2 or V.shape[1] != 3:
        raise MeshError(f"vertices must have shape (n, 3), got {V.shape}")
    if F_raw.ndim != 2 or F_raw.shape[1] != 3:
        raise MeshError(f"faces must have shape (m, 3) (triangles), got {F_raw.shape}")
    finite = np.isfinite(V).all(axis=1)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise MeshError(f"vertex {bad} is not finite: {V[bad].tolist()} "
                        f"({int((~finite).sum())} non-finite vertices)")
    if F_raw.dtype.kind not in "iuf":
        raise MeshError(f"face indices must be integers, got dtype {F_raw.dtype}")
    if F_raw.dtype.kind == "f":
        if not np.isfinite(F_raw).all() or not np.array_equal(F_raw, np.round(F_raw)):
            raise MeshError("face indices must be integers, got non-integer values")
    F = F_raw.astype(np.int64)
    n = V.shape[0]
    if F.min() < 0:
        face = int(np.flatnonzero((F < 0).any(axis=1))[0])
        raise MeshError(f"negative face index {int(F.min())} (face {face})")
    if F.max() >= n:
        face = int(np.flatnonzero((F >= n).any(axis=1))[0])
        raise MeshError(f"face index {int(F.max())} out of range for {n} vertices (face {face})")
    return V, F


@dataclass
class CleanMesh:
    """A cleaned triangle mesh and its ties to the input.

    vertices: (n, 3) float64, the input's frame and units.
    faces: (m, 3) int64, indices into `vertices`.
    kept_vertices: (n,) int64, the input index of each kept vertex (increasing).
    input_to_clean: (n_in,) int64, the clean index of each input vertex, -1 where dropped.
    """

    vertices: np.ndarray
    faces: np.ndarray
    kept_vertices: np.ndarray
    input_to_clean: np.ndarray


def face_double_areas(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Twice the area of each face: (m,) float64, squared mesh units."""
    corners = vertices[faces]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    return np.linalg.norm(cross, axis=1)


def bounding_box_diagonal(vertices: np.ndarray) -> float:
    """Length of the axis-aligned bounding-box diagonal of (n, 3) points, mesh units."""
    return float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))


def clean_mesh(vertices, faces) -> CleanMesh:
    """Validate, then drop degenerate faces, duplicate faces and unreferenced vertices.

    Degenerate: a repeated vertex index or zero area. Duplicate: the same vertex set as an earlier
    face, in any order or orientation; the first one is kept. Raises MeshError when no face is left.
    """
    V, F = validate_mesh_arrays(vertices, faces)
    repeated = (F[:, 0] == F[:, 1]) | (F[:, 1] == F[:, 2]) | (F[:, 0] == F[:, 2])
    diagonal = bounding_box_diagonal(V)
    zero_area = face_double_areas(V, F) <= _ZERO_AREA_RELATIVE * diagonal**2
    keep = ~(repeated | zero_area)
    if not keep.any():
        raise MeshError(f"no usable faces: all {len(F)} faces are degenerate (zero area)")
    F = F[keep]
    _, first = np.unique(np.sort(F, axis=1), axis=0, return_index=True)
    F = F[np.sort(first)]

    kept_vertices = np.unique(F.ravel()).astype(np.int64)
    input_to_clean = np.full(len(V), -1, dtype=np.int64)
    input_to_clean[kept_vertices] = np.arange(len(kept_vertices), dtype=np.int64)
    return CleanMesh(
        vertices=V[kept_vertices],
        faces=input_to_clean[F],
        kept_vertices=kept_vertices,
        input_to_clean=input_to_clean,
    )


def weld_vertices(vertices, faces, tolerance: float = 1e-9):
    """Merge coincident vertices (e.g. a triangle soup with 3 vertices per triangle).

    tolerance: merge distance as a fraction of the bounding-box diagonal. Vertices closer than it
    (transitively) become one, placed at the first occurrence; welded vertices are ordered by first
    occurrence, so the result is deterministic.
    Returns V_welded (n_w, 3) float64, F_welded (m, 3) int64, input_to_welded (n,) int64.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    V, F = validate_mesh_arrays(vertices, faces)
    n = len(V)
    radius = float(tolerance) * bounding_box_diagonal(V)
    pairs = cKDTree(V).query_pairs(r=radius, output_type="ndarray")
    if len(pairs) == 0:
        return V.copy(), F.copy(), np.arange(n, dtype=np.int64)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    # Order the groups by their first (lowest-index) member.
    first_of_label = np.full(labels.max() + 1, n, dtype=np.int64)
    np.minimum.at(first_of_label, labels, np.arange(n, dtype=np.int64))
    representatives = np.unique(first_of_label)  # sorted = order of first occurrence
    label_to_welded = np.empty(labels.max() + 1, dtype=np.int64)
    label_to_welded[labels[representatives]] = np.arange(len(representatives), dtype=np.int64)
    input_to_welded = label_to_welded[labels]
    return V[representatives], input_to_welded[F], input_to_welded
