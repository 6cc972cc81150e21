"""Link assignment: after piece registration, every group of rigid pieces takes, of a few rigid motions,
the one the observation supports best: staying at rest, its own, or another group's.

Two errors of a decoded pose survive the rigid projection and the registration of each group
(docs/model.md, "Piece registration"). A part the decoder tears: a drawer whose front is decoded
15 % of the object's size out and whose side walls only 8 %, each piece rigid, each its own group.
And a part that should stay still but leaks a little of a neighbour's motion: a carcass wall moved
a few millimetres. Registration cannot mend either: the drawer's walls are registered among the
carcass's walls, where the observation is ambiguous, and a leaking wall has no reason to go back.

So the groups become links by a discrete choice. The candidate motions, from the input pose, are
the identity and every group's motion after registration; each group keeps its own position or
takes one of them, judged by the surface error of the rest check (observed points to the surface,
plus surface samples to the observed points), group by group with the others held (coordinate
descent, a few sweeps, the groups with most surface first). The observation often cannot tell: a
panel that slid a little in its own plane, or a wall hidden inside a carcass, scores about the same
anywhere along it. The choice therefore prefers the simpler explanation within `tolerance` (relative)
of the lowest error: rest, where the observation allows it (a part that need not move does not);
else a motion another group already has (fewer distinct motions: one link); else the lowest error.
The total may rise by at most `tolerance` of where it started. No decoder runs: each group's
distances under each candidate are computed once.
"""
from __future__ import annotations

import numpy as np
import torch

from neurok_ros.geometry.rigid_pieces import piece_motions
from neurok_ros.geometry.surface_sampling import evaluate_samples
from neurok_ros.kinematics.objectives import trimmed_mean

SWEEPS = 4  # coordinate-descent sweeps over the groups at most


def group_faces(faces: np.ndarray, vertex_groups: np.ndarray, groups: int) -> list[np.ndarray]:
    """The faces (m, 3) of each group, by the group of their first vertex (pieces are connected
    components, so a face's vertices share it)."""
    of_face = vertex_groups[faces[:, 0]]
    return [faces[of_face == g] for g in range(groups)]


def candidate_motions(rest: torch.Tensor, moved: torch.Tensor, vertex_groups: torch.Tensor,
                      weights: torch.Tensor, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """(C, 3, 3), (C, 3) float64: the identity, then each group's best rigid motion from rest (n, 3) to
    moved (n, 3) (vertex_groups (n,) in [0, groups) or -1; weights (n,), e.g. vertex areas)."""
    held = vertex_groups >= 0
    R, t = piece_motions(rest[held], moved[None, held], vertex_groups[held], weights[held], groups)
    R = torch.cat([torch.eye(3, dtype=R.dtype)[None], R[0]]).numpy()
    t = torch.cat([torch.zeros(1, 3, dtype=t.dtype), t[0]]).numpy()
    return R, t


def squared_distances_to(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(M,) squared distance of points (M, 3) to the triangles faces (f, 3) of vertices (n, 3)."""
    import igl

    if len(faces) == 0:
        return np.full(len(points), np.inf)
    return igl.point_mesh_squared_distance(np.ascontiguousarray(points), np.ascontiguousarray(vertices),
                                           np.ascontiguousarray(faces, dtype=np.int64))[0]


def assign_links(rest: np.ndarray, moved: np.ndarray, faces: np.ndarray, vertex_groups: np.ndarray,
                 weights: np.ndarray, samples, target: np.ndarray, partial: bool = False,
                 trim: float = 0.0, tolerance: float = 0.01) -> np.ndarray:
    """(n, 3) float64: moved (n, 3, registered pose, normalised frame) with every group of
    vertex_groups (n,) in [0, G) or -1 (held as moved) either left as moved, put back at its rest pose
    (rest (n, 3)), or moved from rest by another group's motion, as the surface error against target
    (M, 3) decides with `tolerance` (module docstring; weights (n,): vertex areas for each group's
    motion; samples: SurfaceSamples of the input mesh for the samples-to-observed term, left out when
    partial (register_pieces does not call it then: a part out of view would go back to rest); trim:
    the fraction of observed points farthest from the surface left out, as in the rest check)."""
    from scipy.spatial import cKDTree

    F = np.asarray(faces, dtype=np.int64)
    groups = int(vertex_groups.max()) + 1
    R, t = candidate_motions(torch.as_tensor(rest), torch.as_tensor(moved), torch.as_tensor(vertex_groups),
                             torch.as_tensor(weights), groups)
    faces_of = group_faces(F, vertex_groups, groups)
    sample_groups = vertex_groups[F[samples.face_ids, 0]]
    rest_samples = evaluate_samples(rest, F, samples.face_ids, samples.barycentric)
    moved_samples = evaluate_samples(moved, F, samples.face_ids, samples.barycentric)
    tree = cKDTree(target)
    # option 0: as moved; option 1 + c: candidate motion c from rest (c = 0: the identity, rest)
    to_surface = np.empty((groups, 1 + len(R), len(target)))
    to_target = np.zeros((groups, 1 + len(R)))
    for g in range(groups):
        own = sample_groups == g
        to_surface[g, 0] = squared_distances_to(target, moved, faces_of[g])
        if not partial:
            to_target[g, 0] = np.sum(tree.query(moved_samples[own])[0] ** 2)
        for c in range(len(R)):
            local = (target - t[c]) @ R[c]  # observed points in the rest frame of candidate c
            to_surface[g, 1 + c] = squared_distances_to(local, rest, faces_of[g])
            if not partial:
                to_target[g, 1 + c] = np.sum(tree.query(rest_samples[own] @ R[c].T + t[c])[0] ** 2)

    def error(choice: np.ndarray) -> float:
        nearest = to_surface[np.arange(groups), choice].min(axis=0)
        total = float(trimmed_mean(torch.as_tensor(nearest), trim))
        return total if partial else total + float(to_target[np.arange(groups), choice].sum()) / len(sample_groups)

    choice = np.zeros(groups, dtype=np.int64)
    start = error(choice)
    cap = start * (1.0 + tolerance)
    order = np.argsort(-np.bincount(sample_groups[sample_groups >= 0], minlength=groups), kind="stable")
    for _ in range(SWEEPS):
        changed = False
        for g in order:
            values = np.empty(1 + len(R))
            for option in range(1 + len(R)):
                trial = choice.copy()
                trial[g] = option
                values[option] = error(trial)
            fits = values <= min(values.min() * (1.0 + tolerance), cap)
            others = [o for o in range(2, 1 + len(R)) if fits[o] and o != 2 + g]
            if fits[1]:
                option = 1  # rest
            elif others:
                option = min(others, key=lambda o: values[o])  # another group's motion: one link
            else:
                option = int(np.argmin(values))
            if option != choice[g]:
                choice[g], changed = option, True
        if not changed:
            break
    out = np.array(moved, dtype=np.float64, copy=True)
    for g in range(groups):
        if choice[g] > 0:
            c = choice[g] - 1
            mine = vertex_groups == g
            out[mine] = rest[mine] @ R[c].T + t[c]
    return out
