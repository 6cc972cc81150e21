"""Pose fitting in joint coordinates: the joint values of an articulation that best explain observed
surface points, every part moved by its exact rigid motion along the kinematic tree.

    fit = fit_joint_pose(vertices, faces, articulation, observed)
    fit.q         (J,) float64: rad (revolute) or mesh units (prismatic), the input pose = 0
    fit.vertices  (n, 3) float64: the mesh posed at fit.q, its own frame, units and vertex order
    fit.loss      the fit's Chamfer objective (squared mesh units)

The objective is the IK's Chamfer-L2 (objectives.chamfer_l2) between `points` area-uniform samples
of the posed surface and the observed points (with `partial`, only observed -> posed: a depth view
sees part of the surface). Several starts (q = 0, then uniform draws inside the joint limits) descend together
with Adam on q, the prismatic values in units of the mesh's diagonal, clamped to the limits after
each step, until the best start has not improved by 0.01 % for `patience` steps; the start with the
least loss wins. q = 0 is one of the starts, so the fit never ends worse than not moving at all by
its own objective.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.articulation.urdf import face_labels
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.kinematics.objectives import chamfer_l2

SPAN_WITHOUT_LIMIT = (np.pi / 2, 0.25)  # revolute rad, prismatic fraction of the diagonal


@dataclass
class JointPoseFit:
    """q (J,), names (J,), vertices (n, 3), loss and the number of descent steps; see the module docstring."""

    q: np.ndarray
    names: list
    vertices: np.ndarray
    loss: float
    steps: int

    def joint_values(self) -> dict:
        return {name: float(value) for name, value in zip(self.names, self.q)}


def axis_rotations(axes: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """(..., 3, 3) rotations by angles (...) about unit axes (3,) (Rodrigues)."""
    x, y, z = axes
    zero = torch.zeros((), dtype=angles.dtype)
    k = torch.stack([torch.stack([zero, -z, y]), torch.stack([z, zero, -x]), torch.stack([-y, x, zero])])
    s, c = torch.sin(angles)[..., None, None], torch.cos(angles)[..., None, None]
    return torch.eye(3, dtype=angles.dtype) + s * k + (1.0 - c) * (k @ k)


def part_transforms(articulation: Articulation, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each part's rigid motion at joint values q (S, J): R (S, P, 3, 3) and t (S, P, 3) with
    x = R x_rest + t, composed from the root along the joints (parents before children)."""
    S, P = q.shape[0], articulation.num_parts
    rotations = [torch.eye(3, dtype=q.dtype).expand(S, 3, 3)] * P
    translations = [torch.zeros(S, 3, dtype=q.dtype)] * P
    for j, joint in enumerate(articulation.joints):
        axis = torch.as_tensor(joint.axis, dtype=q.dtype)
        origin = torch.as_tensor(joint.origin, dtype=q.dtype)
        if joint.type == "revolute":
            local_r = axis_rotations(axis, q[:, j])
            local_t = origin - local_r @ origin
        else:
            local_r = torch.eye(3, dtype=q.dtype).expand(S, 3, 3)
            local_t = q[:, j, None] * axis
        parent_r, parent_t = rotations[joint.parent], translations[joint.parent]
        rotations[joint.child] = parent_r @ local_r
        translations[joint.child] = (parent_r @ local_t[..., None])[..., 0] + parent_t
    return torch.stack(rotations, 1), torch.stack(translations, 1)


def fit_joint_pose(vertices, faces, articulation: Articulation, observed, partial: bool = False,
                   points: int = 1024, starts: int = 8, steps: int = 150, rate: float = 0.03,
                   patience: int = 20, seed: int = 0) -> JointPoseFit:
    """See the module docstring; vertices (n, 3) and observed (M, 3) in the same frame and units."""
    V = np.asarray(vertices, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64)
    names = [joint.name for joint in articulation.joints]
    if not articulation.joints:
        return JointPoseFit(np.zeros(0), names, V.copy(), float("nan"), 0)
    rng = np.random.default_rng(seed)
    samples = sample_surface(V, F, points, rng)
    sample_parts = torch.as_tensor(face_labels(F, articulation.labels)[samples.face_ids])
    rest = torch.as_tensor(samples.points)
    target = torch.as_tensor(np.asarray(observed, dtype=np.float64).reshape(-1, 3))
    diagonal = float(np.linalg.norm(np.ptp(V, axis=0)))
    prismatic = np.array([joint.type == "prismatic" for joint in articulation.joints])
    scale = torch.as_tensor(np.where(prismatic, diagonal, 1.0))
    lower = np.array([joint.lower for joint in articulation.joints])
    upper = np.array([joint.upper for joint in articulation.joints])
    span = np.where(prismatic, SPAN_WITHOUT_LIMIT[1] * diagonal, SPAN_WITHOUT_LIMIT[0])
    lower = np.where(np.isfinite(lower), lower, -span)
    upper = np.where(np.isfinite(upper), upper, span)
    first = np.zeros((1, len(names)))
    draws = rng.uniform(lower, upper, size=(max(starts - 1, 0), len(names)))
    u = torch.tensor(np.concatenate([first, draws]) / scale.numpy(), requires_grad=True)
    low, high = torch.as_tensor(lower) / scale, torch.as_tensor(upper) / scale
    optimiser = torch.optim.Adam([u], lr=rate)

    def losses(values: torch.Tensor) -> torch.Tensor:
        R, t = part_transforms(articulation, values * scale)
        posed = (R[:, sample_parts] @ rest[None, :, :, None])[..., 0] + t[:, sample_parts]
        return chamfer_l2(posed, target, one_sided=partial)

    best_so_far, quiet, taken = np.inf, 0, 0
    while taken < steps:
        taken += 1
        optimiser.zero_grad(set_to_none=True)
        current = losses(u)
        current.sum().backward()
        optimiser.step()
        with torch.no_grad():
            u.copy_(torch.maximum(torch.minimum(u, high), low))
        least = float(current.detach().min())
        quiet = quiet + 1 if least > best_so_far * (1.0 - 1e-4) else 0
        best_so_far = min(best_so_far, least)
        if quiet >= patience:  # the best start has stopped improving
            break
    with torch.no_grad():
        candidates = torch.cat([u, torch.zeros_like(u[:1])])  # and q = 0 itself, never worse than it
        final = losses(candidates)
        best = int(torch.argmin(final))
        q = (candidates[best] * scale).numpy().copy()
        R, t = part_transforms(articulation, torch.as_tensor(q)[None])
    labels = articulation.labels
    posed = np.einsum("nij,nj->ni", R[0, labels].numpy(), V) + t[0, labels].numpy()
    return JointPoseFit(q, names, posed, float(final[best]), taken)


def observed_chamfer(vertices, faces, observed, partial: bool = False, points: int = 4096, seed: int = 0) -> float:
    """The fit objective (objectives.chamfer_l2) of a mesh (vertices (n, 3), faces (m, 3)) against
    observed points (M, 3), from `points` samples of its surface; squared mesh units."""
    samples = sample_surface(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64), points,
                             np.random.default_rng(seed)).points
    observed = torch.as_tensor(np.asarray(observed, dtype=np.float64).reshape(-1, 3))
    return float(chamfer_l2(torch.as_tensor(samples)[None], observed, one_sided=partial)[0])
