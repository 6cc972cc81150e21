"""Rigid pieces: a mesh made of several connected pieces is taken as an assembly of rigid parts.

Procedural and CAD objects (a cabinet's carcass, doors and handles; a laptop's base, lid and hinge
barrels) come as one closed piece per part, and a part does not bend. A single-piece mesh (a scan,
a soft body, a cloth) gets no such constraint: its deformation is the model's.

    labels = vertex_pieces(faces, len(vertices))      # (n,) piece of each vertex, or -1
    moved = rigid_projection(rest, moved, labels)       # every piece moved by its best rigid motion

The best rigid motion of a piece is the weighted Kabsch fit of its rest points to its moved points;
the projection replaces the moved points by the rest points under that motion, so each piece keeps
its exact rest shape. `rigidity_residual` is the mean squared distance of the moved points from
that projection: 0 for a motion that moves every piece rigidly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurok_ros.geometry.mesh_cleaning import face_double_areas
from neurok_ros.geometry.rigid_alignment import rotation_from_covariance


def vertex_pieces(faces, num_vertices: int) -> np.ndarray:
    """(n,) int64: the connected piece of each vertex (faces sharing a vertex are one piece), or -1
    for every vertex when the mesh is a single piece (nothing to hold rigid) and for vertices no face
    uses."""
    import scipy.sparse as sparse
    from scipy.sparse.csgraph import connected_components

    F = np.asarray(faces, dtype=np.int64)
    rows, cols = F.ravel(), np.roll(F, 1, axis=1).ravel()
    graph = sparse.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(num_vertices, num_vertices))
    _, labels = connected_components(graph, directed=False)
    used = np.zeros(num_vertices, dtype=bool)
    used[F.ravel()] = True
    labels = labels.astype(np.int64)
    labels[~used] = -1
    pieces = np.unique(labels[used])
    if len(pieces) <= 1:
        return np.full(num_vertices, -1, dtype=np.int64)
    # consecutive piece numbers 0..P-1
    renumber = np.full(labels.max() + 1, -1, dtype=np.int64)
    renumber[pieces] = np.arange(len(pieces))
    return np.where(labels >= 0, renumber[np.maximum(labels, 0)], -1)


WELD_TOLERANCE = 1e-5  # fraction of the bounding-box diagonal


def boundary_vertices(faces, num_vertices: int) -> np.ndarray:
    """(n,) bool: the vertices on an open boundary (an edge that only one face uses)."""
    F = np.asarray(faces, dtype=np.int64)
    edges = np.sort(np.stack([F, np.roll(F, -1, axis=1)], axis=-1).reshape(-1, 2), axis=1)
    unique, counts = np.unique(edges, axis=0, return_counts=True)
    out = np.zeros(num_vertices, dtype=bool)
    out[unique[counts == 1].ravel()] = True
    return out


def welded_pieces(vertices, faces, tolerance: float = WELD_TOLERANCE) -> np.ndarray:
    """(n,) int64: the connected piece of each vertex once the open boundaries that coincide are
    welded (a UV seam or a triangle-soup export does not split a surface, while closed parts that
    merely touch, a lid on its box, stay apart), numbered 0..P-1; -1 for vertices no face uses.
    tolerance: a fraction of the bounding-box diagonal. A single piece is 0 everywhere."""
    import scipy.sparse as sparse
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    V, F = np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64)
    n = len(V)
    rows, cols = [F.ravel()], [np.roll(F, 1, axis=1).ravel()]
    open_ends = np.flatnonzero(boundary_vertices(F, n))
    if len(open_ends) > 1:
        radius = tolerance * float(np.linalg.norm(np.ptp(V, axis=0)))
        pairs = cKDTree(V[open_ends]).query_pairs(r=radius, output_type="ndarray")
        rows.append(open_ends[pairs[:, 0]])
        cols.append(open_ends[pairs[:, 1]])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    graph = sparse.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    used = np.zeros(n, dtype=bool)
    used[F.ravel()] = True
    _, renumbered = np.unique(labels[used], return_inverse=True)
    out = np.full(n, -1, dtype=np.int64)
    out[used] = renumbered
    return out


def vertex_areas(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(n,) float64: a third of the area of the faces around each vertex (mesh units squared)."""
    V, F = np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64)
    out = np.zeros(len(V))
    np.add.at(out, F.ravel(), np.repeat(face_double_areas(V, F) / 6.0, 3))
    return out


@torch.no_grad()
def piece_motions(rest: torch.Tensor, moved: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor,
                  pieces: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Best rigid motion of each piece: rotations (B, P, 3, 3) and translations (B, P, 3) with
    R rest + t ~ moved in the weighted least-squares sense. rest (N, 3); moved (B, N, 3); labels (N,)
    int64 in [0, P) (no -1 here); weights (N,) >= 0. A piece of fewer than three points, or of
    collinear ones, gets the rotation the SVD gives (still the least-squares optimum)."""
    B = moved.shape[0]
    w = weights.to(moved)
    total = torch.zeros(pieces, dtype=moved.dtype, device=moved.device).index_add_(0, labels, w)
    total = total.clamp_min(torch.finfo(moved.dtype).tiny)
    rest_centre = torch.zeros(pieces, 3, dtype=moved.dtype, device=moved.device).index_add_(
        0, labels, w[:, None] * rest.to(moved)) / total[:, None]
    moved_centre = torch.zeros(B, pieces, 3, dtype=moved.dtype, device=moved.device).index_add_(
        1, labels, w[None, :, None] * moved) / total[None, :, None]
    p = rest.to(moved) - rest_centre[labels]                       # (N, 3)
    x = moved - moved_centre[:, labels]                             # (B, N, 3)
    outer = w[None, :, None, None] * p[None, :, :, None] * x[:, :, None, :]   # (B, N, 3, 3)
    H = torch.zeros(B, pieces, 3, 3, dtype=moved.dtype, device=moved.device).index_add_(1, labels, outer)
    R = rotation_from_covariance(H)
    t = moved_centre - (R @ rest_centre[None, :, :, None])[..., 0]
    return R, t


def rigid_projection(rest: torch.Tensor, moved: torch.Tensor, labels: torch.Tensor,
                     weights: torch.Tensor | None = None) -> torch.Tensor:
    """moved (B, N, 3) with each piece's points (labels (N,) >= 0) replaced by their rest points (N, 3)
    under the piece's best rigid motion (piece_motions; weights (N,), default equal); points labelled -1
    keep their moved position. The motions are computed without gradient: the result's gradient in
    `moved` is zero on the pieces (use rigidity_residual to pull a fit towards rigid pieces)."""
    held = labels >= 0
    if not bool(held.any()):
        return moved
    weights = torch.ones(len(rest), dtype=moved.dtype, device=moved.device) if weights is None else weights
    index = labels[held]
    R, t = piece_motions(rest[held], moved[:, held], index, weights[held], int(index.max()) + 1)
    projected = (R[:, index] @ rest[held].to(moved)[None, :, :, None])[..., 0] + t[:, index]
    out = moved.clone()
    out[:, held] = projected
    return out


def rigidity_residual(rest: torch.Tensor, moved: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """(B,) mean over the labelled points of the squared distance between moved (B, N, 3) and its
    rigid projection (units squared); 0 where no point is labelled. Differentiable in moved: the best
    motions are the minimisers, so holding them fixed gives the residual's exact gradient."""
    held = labels >= 0
    if not bool(held.any()):
        return moved.new_zeros(moved.shape[0])
    projected = rigid_projection(rest, moved, labels).detach()
    return (moved[:, held] - projected[:, held]).square().sum(-1).mean(1)


@dataclass
class RigidPieces:
    """The pieces of a multi-piece mesh: labels (n,) int64 (vertex_pieces, all >= 0 but for unused
    vertices) and vertex areas (n,), the weights of each piece's best rigid motion."""

    labels: np.ndarray
    areas: np.ndarray

    @classmethod
    def of_mesh(cls, vertices: np.ndarray, faces: np.ndarray) -> "RigidPieces | None":
        """The pieces of a mesh (vertices (n, 3), faces (m, 3)), or None for a single-piece mesh."""
        labels = welded_pieces(vertices, faces)
        if labels.max() < 1:
            return None
        return cls(labels, vertex_areas(vertices, faces))

    def sample_labels(self, faces: np.ndarray, face_ids: np.ndarray, least: int = 4) -> torch.Tensor:
        """(N,) int64 piece of each surface sample (by its face), -1 for the samples of pieces with
        fewer than `least` samples (too few for a rigid fit to tell anything)."""
        labels = self.labels[np.asarray(faces, dtype=np.int64)[np.asarray(face_ids, dtype=np.int64), 0]]
        counts = np.bincount(labels[labels >= 0], minlength=int(self.labels.max()) + 1)
        return torch.as_tensor(np.where((labels >= 0) & (counts[labels] >= least), labels, -1))

    def project(self, rest: np.ndarray, moved: np.ndarray) -> np.ndarray:
        """moved (n, 3) float64 with every piece moved rigidly from rest (n, 3) by its best motion (same frame)."""
        out = rigid_projection(torch.as_tensor(np.asarray(rest, dtype=np.float64)),
                               torch.as_tensor(np.asarray(moved, dtype=np.float64))[None],
                               torch.as_tensor(self.labels), torch.as_tensor(self.areas))
        return out[0].numpy()
