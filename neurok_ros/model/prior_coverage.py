"""Prior coverage: prior samples must decode to poses the object takes, and its poses must be reached.

The KL term of the VAE only pulls the posteriors of the training pairs towards N(mu_cond, I); it
says nothing about what the decoder does with a draw z ~ N(mu_cond, I) that no posterior visited,
and such draws bent laptop lids instead of turning them. This term decodes S prior draws per pair
and compares them, as whole point sets with known correspondence, with the P poses of the same
instance (its rest pose and frames, seen from M0 = pose a):

  d[s, p] = sum over the coverage query points of |x_s - y_p|^2     (normalised units^2)
  coverage = mean_s min_p d[s, p]  +  mean_p min_s d[s, p]

The first half asks every draw to be one of the object's poses (a valid shape); the second asks every
pose to be reached by some draw, so the draws cannot all collapse onto M0. It is an implicit
maximum-likelihood set loss, category-agnostic and computed from the 4D data alone.
"""
from __future__ import annotations

import torch


def pose_set_distances(sample_positions: torch.Tensor, pose_positions: torch.Tensor) -> torch.Tensor:
    """Squared distances between whole point sets with correspondence, summed over the points:
    sample_positions (B, S, Q, 3), pose_positions (B, P, Q, 3) -> (B, S, P)."""
    difference = sample_positions.float().unsqueeze(2) - pose_positions.float().unsqueeze(1)  # (B, S, P, Q, 3)
    return (difference ** 2).sum((-1, -2))


def coverage_loss(sample_positions: torch.Tensor, pose_positions: torch.Tensor) -> torch.Tensor:
    """mean_s min_p d + mean_p min_s d per pair, (B,); shapes as pose_set_distances."""
    d = pose_set_distances(sample_positions, pose_positions)
    return d.min(dim=2).values.mean(dim=1) + d.min(dim=1).values.mean(dim=1)
