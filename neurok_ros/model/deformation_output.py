"""What a per-point deformation does to its points: the one place that applies either output."""
from __future__ import annotations

import torch

from neurok_ros.geometry import dual_quaternion as dq


def apply_deformation(prediction: torch.Tensor, points: torch.Tensor, output: str) -> torch.Tensor:
    """Deformed positions (B, N, 3): points (B or 1, N, 3) moved by per-point unit dual quaternions
    (B, N, 8) or displacements (B, N, 3); normalised object frame."""
    if output == "dual_quaternion":
        return dq.apply(prediction, points)
    return points + prediction
