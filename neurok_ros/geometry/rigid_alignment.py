"""The rigid motion that puts a moved point set back onto its rest positions (Kabsch, batched torch).

    R, t = rigid_alignment(moved, rest)      # moved (B, h, 3), rest (h, 3), same units
    aligned = apply_rigid(R, t, points)      # points (B, n, 3): R x + t for every point

R (B, 3, 3) is a proper rotation (det +1) and t (B, 3) a translation, the least-squares fit with
equal weights. Used to express a shape in the frame of a held part (simulation/learned_map.py).
Points on one line do not fix the rotation about it (`fixes_a_frame` says whether they do).
"""
from __future__ import annotations

import torch


def rigid_alignment(moved: torch.Tensor, rest: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(R (B, 3, 3), t (B, 3)) minimising sum |R moved_i + t - rest_i|^2 per batch entry; at least 3
    points that are not on one line."""
    moved_centre = moved.mean(dim=1, keepdim=True)
    rest_centre = rest.mean(dim=0)
    covariance = (moved - moved_centre).transpose(1, 2) @ (rest - rest_centre).to(moved.dtype)  # (B, 3, 3)
    rotation = rotation_from_covariance(covariance)
    translation = rest_centre - (rotation @ moved_centre.transpose(1, 2))[..., 0]
    return rotation, translation


def rotation_from_covariance(covariance: torch.Tensor) -> torch.Tensor:
    """The proper rotation R (..., 3, 3) minimising sum |R a_i - b_i|^2 for centred point sets with
    covariance sum a_i b_i^T (..., 3, 3) (Kabsch: the SVD's rotation, its last axis flipped where that
    would be a reflection)."""
    u, _, vh = torch.linalg.svd(covariance)
    sign = torch.sign(torch.linalg.det(vh.transpose(-1, -2) @ u.transpose(-1, -2)))
    flip = torch.ones(*covariance.shape[:-1], dtype=covariance.dtype, device=covariance.device)
    flip[..., 2] = torch.where(sign == 0, torch.ones_like(sign), sign)
    return vh.transpose(-1, -2) @ torch.diag_embed(flip) @ u.transpose(-1, -2)


def apply_rigid(rotation: torch.Tensor, translation: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
    """R x + t for points (B, n, 3) with R (B, 3, 3), t (B, 3)."""
    return points @ rotation.transpose(1, 2) + translation[:, None, :]


def fixes_a_frame(points: torch.Tensor, spread: float = 0.05) -> bool:
    """Whether points (h, 3) determine a rotation: at least 3 of them, and not on one line (their
    second principal spread is at least `spread` of the first)."""
    if points.shape[0] < 3:
        return False
    singular = torch.linalg.svdvals(points - points.mean(dim=0))
    return bool(singular[0] > 0 and singular[1] >= spread * singular[0])
