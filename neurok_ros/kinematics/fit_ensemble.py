"""An ensemble of independent fits of one observation, averaged vertex by vertex.

Fit j encodes the mesh from its own surface samples (EncodingConfig seed + j) and runs fit_pose from its
own starts (IKConfig seed + j); fit 0 is the single fit of encode_mesh + fit_pose. Each fit's errors
come from its samples and starts, so the vertex mean of K fits is closer to the observed pose than a
typical member (docs/model.md, "An ensemble of fits"). The mean is an estimate of the shape, not a
state of the model: a simulation starts from one member's latent (the medoid's).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import torch

from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.rigid_pieces import RigidPieces
from neurok_ros.kinematics.instance import EncodingConfig, NeuROKInstance, encode_mesh
from neurok_ros.kinematics.inverse_kinematics import IKConfig, IKResult, fit_pose


@dataclass
class EnsembleFit:
    """vertices: (n, 3) float64, the mean of the fits' decoded vertices, the input mesh's frame and
    units (with rigid pieces, IKConfig.rigid_pieces, projected on each piece's best rigid motion as every
    fit is); spread: (n,) float64, each vertex's RMS distance from that mean over the fits (same units);
    members: (instance, IKResult) per fit; member_vertices: (K, n, 3) float64; medoid: index of the
    member with the least summed mean vertex distance to the others; seconds: encoding and fitting."""

    vertices: np.ndarray
    spread: np.ndarray
    members: list[tuple[NeuROKInstance, IKResult]]
    member_vertices: np.ndarray
    medoid: int
    seconds: float


def fit_ensemble(model: torch.nn.Module, vertices, faces, observed_points, fits: int = 4,
                 encoding: EncodingConfig = EncodingConfig(), ik: IKConfig = IKConfig()) -> EnsembleFit:
    """Fit `fits` members to observed_points (M, 3), the mesh's frame and units (a scan's points, no
    correspondence); vertices (n, 3) and faces (m, 3) are the mesh in the pose the model encodes."""
    if isinstance(fits, bool) or not isinstance(fits, (int, np.integer)) or fits < 1:
        raise NeurokInputError(f"an ensemble needs at least one fit, got {fits!r}")
    started = time.perf_counter()
    observed = np.asarray(observed_points, dtype=np.float64)
    members, decoded = [], []
    for j in range(int(fits)):
        instance = encode_mesh(model, vertices, faces, replace(encoding, seed=encoding.seed + j))
        target = torch.as_tensor(instance.transform.apply(observed), dtype=instance.prior_mean.dtype)
        result = fit_pose(instance, target, replace(ik, seed=ik.seed + j))
        members.append((instance, result))
        decoded.append(result.vertices)
    stacked = np.stack(decoded)
    mean = stacked.mean(axis=0)
    pieces = RigidPieces.of_mesh(members[0][0].vertices, members[0][0].faces) if ik.rigid_pieces and fits > 1 else None
    if pieces is not None:  # the mean of rigid motions is not quite rigid: project it as each fit was
        mean = pieces.project(members[0][0].vertices, mean)
    spread = np.sqrt(np.square(stacked - mean).sum(axis=2).mean(axis=0))
    distances = np.linalg.norm(stacked[:, None] - stacked[None], axis=3).mean(axis=2)
    return EnsembleFit(mean, spread, members, stacked, int(distances.sum(axis=1).argmin()),
                       time.perf_counter() - started)
