"""Draw rigidity: prior samples may change only the distances that the instance's own motion changes.

Two surface points of a rigid part keep their distance in every pose of the data; a lid that bends in
a prior sample breaks exactly those distances. From the P poses of an instance (the pose sets of
the coverage loss, (B, P, C, 3)), a pair of coverage points (i, j) is rigid when its distance varies
by less than `tolerance` (normalised units) over all poses. For each prior draw x (B, S, C, 3):

  rigidity = sum_i (1 / C) sum_{j rigid with i} (|x_i - x_j| - r_ij)^2,   mean over the S draws,

with r_ij the pair's distance in the data (its mean over the poses). Units as the position term: a
sum over points of squared normalised lengths. Category-agnostic and from the 4D data alone: cloth
and soft bodies, whose distances do change, get few rigid pairs; the parts of articulated objects
get all of theirs, and points on a hinge line keep their distances to both parts.
"""
from __future__ import annotations

import torch


def pairwise_distances(points: torch.Tensor) -> torch.Tensor:
    """(..., C, 3) -> (..., C, C) Euclidean distances (gradient-safe on the diagonal)."""
    difference = points.unsqueeze(-2) - points.unsqueeze(-3)
    return torch.sqrt((difference ** 2).sum(-1) + 1e-12)


def rigid_pairs(pose_positions: torch.Tensor, tolerance: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(mask (B, C, C) bool of rigid pairs, reference distances (B, C, C)) from (B, P, C, 3) poses."""
    distances = pairwise_distances(pose_positions.float())
    spread = distances.amax(dim=1) - distances.amin(dim=1)
    count = pose_positions.shape[2]
    off_diagonal = ~torch.eye(count, dtype=torch.bool, device=pose_positions.device)
    return (spread < tolerance) & off_diagonal, distances.mean(dim=1)


def rigidity_loss(draw_positions: torch.Tensor, pose_positions: torch.Tensor, tolerance: float) -> torch.Tensor:
    """The module's term per pair, (B,): draw_positions (B, S, C, 3), pose_positions (B, P, C, 3)."""
    mask, reference = rigid_pairs(pose_positions, tolerance)
    error = (pairwise_distances(draw_positions.float()) - reference.unsqueeze(1)) ** 2  # (B, S, C, C)
    per_draw = (error * mask.unsqueeze(1)).sum((-1, -2)) / draw_positions.shape[2]
    return per_draw.mean(dim=1)
