"""Piece registration: after a fit, every rigid piece of a multi-piece SOURCE moves rigidly onto the observation.

A decoded pose brings each part near where the observation shows it, and the rigid projection
(geometry/rigid_pieces.py) makes every part rigid. What is left is the decoder's own error: a lid a
few degrees short, a drawer a few millimetres in. Registration starts from the fitted vertices and
gives each piece a rigid motion, fitted by symmetric ICP: every surface sample of the fitted mesh is paired
with its nearest observed point and every observed point with its nearest sample, the fit's own
symmetric Chamfer objective, so a piece cannot take points that another piece explains; each
step gives every piece the least-squares rigid motion of its pairs. No decoder runs; it takes a
fraction of a second.

A part is often several pieces (a laptop's keyboard plate on its base, the screen on its lid): a thin
plate lying on another piece could slide along it at no cost to the Chamfer objective. So the pieces
are first grouped by the fit's motion (motion_groups): pieces the fit moves alike (to within a
tolerance) move as one rigid body, and each group gets one motion.

    vertices = register_pieces(rest, fitted, faces, RigidPieces.of_mesh(rest, faces), samples, target,
                               steps=20, tolerance=0.01, fresh=other_samples)
"""
from __future__ import annotations

import itertools

import numpy as np
import torch

from neurok_ros.geometry.rigid_pieces import piece_motions
from neurok_ros.geometry.surface_sampling import evaluate_samples
from neurok_ros.kinematics.link_assignment import assign_links
from neurok_ros.kinematics.objectives import normalised_surface_error


def motion_groups(rest: torch.Tensor, moved: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor,
                  tolerance: float) -> np.ndarray:
    """(P,) int64 group of each piece, groups numbered 0..G-1: pieces i and j are one group (and so,
    transitively, their groups) when moving piece i's and piece j's rest vertices by either's best
    rigid motion from rest (n, 3) to moved (n, 3) (labels (n,) in [0, P) or -1; weights (n,)) gives
    points at most `tolerance` apart (weighted RMS over both pieces, the units of rest)."""
    held = labels >= 0
    index = labels[held]
    pieces = int(index.max()) + 1
    R, t = piece_motions(rest[held], moved[None, held], index, weights[held], pieces)
    R, t = R[0], t[0]
    points, w = rest[held].to(R), weights[held].to(R)
    parent = list(range(pieces))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in itertools.combinations(range(pieces), 2):
        both = (index == i) | (index == j)
        x = points[both]
        gap = ((x @ R[i].T + t[i]) - (x @ R[j].T + t[j])).square().sum(-1)
        if float((w[both] * gap).sum() / w[both].sum().clamp_min(1e-12)) <= tolerance ** 2:
            parent[root(i)] = root(j)
    roots = [root(i) for i in range(pieces)]
    return np.unique(roots, return_inverse=True)[1].astype(np.int64)


def moved_groups(points: torch.Tensor, groups: torch.Tensor, R: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """(N, 3): points (N, 3) of groups (N,) in [0, G) moved by their group's R (G, 3, 3), t (G, 3);
    points of group -1 stay where they are."""
    index = groups.clamp_min(0)
    return torch.where((groups >= 0)[:, None], (R[index] @ points[:, :, None])[..., 0] + t[index], points)


def symmetric_icp(points: torch.Tensor, groups: torch.Tensor, count: int, target: torch.Tensor,
                  iterations: int, partial: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Rigid motions (count, 3, 3), (count, 3) of the point groups that bring points (N, 3) (groups
    (N,) in [0, count), -1 held still) onto target (M, 3): `iterations` steps of symmetric ICP. Each
    step pairs every point with its nearest target point and every target point with its nearest
    point (unless partial: only the target's pairs), and gives every group the weighted Kabsch motion
    of its pairs (each direction weighs half, as in chamfer_l2); the motions compose."""
    from scipy.spatial import cKDTree

    R = torch.eye(3, dtype=points.dtype).repeat(count, 1, 1)
    t = torch.zeros(count, 3, dtype=points.dtype)
    observed = target.numpy()
    tree = cKDTree(observed)
    for _ in range(iterations):
        moved = moved_groups(points, groups, R, t)
        to_points = torch.as_tensor(cKDTree(moved.numpy()).query(observed)[1])
        source, destination = [moved[to_points]], [target]
        labels, weights = [groups[to_points]], [torch.full((len(target),), 0.5 / len(target), dtype=points.dtype)]
        if not partial:
            to_target = torch.as_tensor(tree.query(moved.numpy())[1])
            source.append(moved)
            destination.append(target[to_target])
            labels.append(groups)
            weights.append(torch.full((len(points),), 0.5 / len(points), dtype=points.dtype))
        source, destination, labels, weights = map(torch.cat, (source, destination, labels, weights))
        keep = labels >= 0
        step_R, step_t = piece_motions(source[keep], destination[keep][None], labels[keep], weights[keep], count)
        R, t = step_R[0] @ R, (step_R[0] @ t[:, :, None])[..., 0] + step_t[0]
    return R, t


def register_pieces(rest: np.ndarray, vertices: np.ndarray, faces: np.ndarray, pieces, samples,
                    target: torch.Tensor, steps: int, tolerance: float, partial: bool = False,
                    trim: float = 0.0, fresh=None, links: bool = False, link_tolerance: float = 0.01) -> np.ndarray:
    """(n, 3) float64: vertices (n, 3, normalised frame; the fit of the input pose rest (n, 3)) with
    every group of pieces (pieces: RigidPieces; motion_groups with `tolerance`, normalised units)
    moved by the rigid motion that brings it onto the observed points target (M, 3, normalised
    frame): `steps` steps of symmetric_icp (one-sided when partial) from the samples (SurfaceSamples
    of the input mesh) on the fitted surface. With fresh (SurfaceSamples of the input mesh), the
    registered vertices are returned only when their normalised_surface_error (partial, trim) is
    below the fit's: a fit already as good as the sampling lets the objective tell stays as it is.
    With links, every group then takes the motion the observation supports among rest, its own and
    the other groups' (link_assignment.assign_links with link_tolerance, judged on `samples`); not when
    partial: a part the view does not show would score alike anywhere and go back to rest."""
    V = torch.as_tensor(np.asarray(vertices, dtype=np.float64))
    if steps <= 0:
        return V.numpy()
    group = motion_groups(torch.as_tensor(np.asarray(rest, dtype=np.float64)), V, torch.as_tensor(pieces.labels),
                          torch.as_tensor(pieces.areas), tolerance)
    group = torch.as_tensor(group)

    def grouped(labels: np.ndarray) -> torch.Tensor:  # piece labels (or -1) -> group labels (or -1)
        labels = torch.as_tensor(labels)
        return torch.where(labels >= 0, group[labels.clamp_min(0)], -1)

    F = np.asarray(faces, dtype=np.int64)
    points = torch.as_tensor(evaluate_samples(V.numpy(), F, samples.face_ids, samples.barycentric))
    R, t = symmetric_icp(points, grouped(pieces.sample_labels(F, samples.face_ids).numpy()), int(group.max()) + 1,
                         target.double(), steps, partial)
    moved = moved_groups(V, grouped(pieces.labels), R, t).numpy()
    if fresh is not None:
        observed = target.double().numpy()
        errors = [normalised_surface_error(v, F, observed, fresh, partial, trim) for v in (V.numpy(), moved)]
        moved = moved if errors[1] < errors[0] else V.numpy()
    if not links or partial:
        return moved
    return assign_links(np.asarray(rest, dtype=np.float64), moved, F, grouped(pieces.labels).numpy(),
                        np.asarray(pieces.areas, dtype=np.float64), samples, target.double().numpy(), partial, trim,
                        link_tolerance)
