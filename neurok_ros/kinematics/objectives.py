"""What a fit minimises and how it is judged: the Chamfer objective and the surface error.

chamfer_l2 is fit_pose's data term, between decoded samples and the observed points, with the nearest
neighbours found without autograd. surface_error is what the rest check, the piece registration and the
link assignment compare: the observed points' squared distance to a mesh surface, plus its samples'
squared distance to the observed points (normalised units squared). Both can leave out the `trim`
fraction of observed points farthest from the shape (outliers of the observation).
"""
from __future__ import annotations

import igl
import numpy as np
import torch

from neurok_ros.geometry.surface_sampling import evaluate_samples
from neurok_ros.kinematics.pose_space import PoseSpace


def kept_count(count: int, trim: float) -> int:
    """How many of `count` observed points a fit with `trim` keeps: at least one."""
    return max(1, count - int(trim * count))


def trimmed_mean(values: torch.Tensor, trim: float) -> torch.Tensor:
    """Mean over the last axis (..., M) of the kept_count(M, trim) smallest values."""
    if trim <= 0.0:
        return values.mean(-1)
    return torch.topk(values, kept_count(values.shape[-1], trim), dim=-1, largest=False).values.mean(-1)


def surface_error(space: PoseSpace, decoded: np.ndarray, target: np.ndarray, samples,
                  partial: bool = False, trim: float = 0.0) -> float:
    """Mean squared distance (normalised units^2) from the observed points (M, 3, normalised frame) to
    the decoded surface (vertices (n, 3) in the mesh frame, e.g. fitted_vertices), the `trim` fraction
    farthest left out, plus (unless partial: the observation shows part of the surface) that of the
    decoded surface samples (SurfaceSamples of the input mesh, re-evaluated on the decoded vertices)
    to their nearest observed point."""
    return normalised_surface_error(space.transform.apply(decoded), space.faces, target, samples, partial, trim)


def normalised_surface_error(vertices: np.ndarray, faces: np.ndarray, target: np.ndarray, samples,
                             partial: bool = False, trim: float = 0.0) -> float:
    """surface_error of vertices (n, 3) already in the normalised frame (faces (m, 3))."""
    faces = np.asarray(faces, dtype=np.int64)
    vertices = np.asarray(vertices, dtype=np.float64)
    to_surface = float(trimmed_mean(torch.as_tensor(igl.point_mesh_squared_distance(target, vertices, faces)[0]), trim))
    if partial:
        return to_surface
    points = evaluate_samples(vertices, faces, samples.face_ids, samples.barycentric)
    to_target = torch.cdist(torch.as_tensor(points), torch.as_tensor(target)).min(dim=1).values.square()
    return to_surface + float(to_target.mean())


def sampling_gap(space: PoseSpace, samples, count: int, seed: int, trim: float = 0.0) -> float:
    """The surface error an observation of SOURCE itself would have: mean squared distance from
    `samples` (SurfaceSamples of the input mesh) to `count` other samples of it (normalised units^2),
    the `trim` fraction farthest left out as in surface_error."""
    _, other = space.surface_samples(count, seed=seed)
    own = torch.as_tensor(space.transform.apply(samples.points), dtype=other.dtype).to(other.device)
    return float(trimmed_mean(torch.cdist(own, other).min(dim=1).values.square(), trim))


def nearest_indices(points: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest neighbours, without autograd, between batched point sets (B, N, 3) and one target set
    (M, 3): (B, N) index of each point's nearest target point and (B, M) index of each target point's
    nearest point in its row. On the CPU by k-d trees (8x faster than the (B, N, M) distance matrix
    for 8 x 1024 x 2048, whose argmin over the middle axis is slow; one worker each: these queries are
    small, and starting threads for each cost more than they saved, 1.3x on 2 cores); elsewhere by
    that matrix."""
    if points.device.type != "cpu":
        d = torch.cdist(points.detach(), target.detach().expand(points.shape[0], -1, -1))
        return d.argmin(dim=2), d.argmin(dim=1)
    from scipy.spatial import cKDTree

    rows = points.detach().numpy()
    observed = target.detach().numpy()
    _, to_target = cKDTree(observed).query(rows.reshape(-1, 3), workers=1)
    to_points = np.stack([cKDTree(row).query(observed, workers=1)[1] for row in rows])
    return (torch.from_numpy(to_target.reshape(rows.shape[:2])).to(torch.long),
            torch.from_numpy(to_points).to(torch.long))


def chamfer_l2(points: torch.Tensor, target: torch.Tensor, one_sided: bool = False, trim: float = 0.0) -> torch.Tensor:
    """Symmetric Chamfer-L2 (B,) between batched point sets (B, N, 3) and one target set (M, 3); with
    one_sided, only the target points' mean squared distance to their nearest point (an observation
    of part of the surface says nothing about where the rest of it is). With trim, the target points'
    term averages only the kept_count(M, trim) nearest (per row: outliers of the observation).

    Nearest neighbours are found without autograd (nearest_indices); the loss is then rebuilt from
    the matched pairs, which has the same gradient almost everywhere and avoids back-propagating
    through the (B, N, M) distance matrix (~10x faster on the CPU)."""
    to_target, to_points = nearest_indices(points, target)
    nearest = torch.gather(points, 1, to_points[..., None].expand(-1, -1, 3))
    backward = trimmed_mean((nearest - target).square().sum(-1), trim)
    if one_sided:
        return backward
    forward = (points - target[to_target]).square().sum(-1).mean(1)
    return 0.5 * (forward + backward)
