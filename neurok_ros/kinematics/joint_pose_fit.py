"""Pose fitting in joint coordinates: the joint values of an articulation that best explain observed
surface points, every part moved by its exact rigid motion along the kinematic tree.

    fit = fit_joint_pose(vertices, faces, articulation, observed)
    fit.q         (J,) float64: rad (revolute) or mesh units (prismatic), the input pose = 0
    fit.vertices  (n, 3) float64: the mesh posed at fit.q, its own frame, units and vertex order
    fit.loss      the fit's Chamfer objective (squared mesh units)

The objective is the IK's Chamfer-L2 (objectives.chamfer_l2) between `points` area-uniform samples
of the posed surface and the observed points (with `partial`, only observed -> posed: a depth view
sees part of the surface). The values searched are each joint's span (search_span): a full turn for
a revolute joint and the limits widened by the part's own length for a prismatic one, since a
readout's limits are only what its evidence suggests; with hold_limits, the articulation's limits
(a URDF you trust). Several starts descend together with Adam on q, the prismatic values in units
of the mesh's diagonal, clamped to the span after each step, until the best start has not improved
by 0.01 % for `patience` steps: q = 0, the grid start (grid_start: coordinate sweeps over a grid of
each joint's span, then finer ones), and uniform draws in the span. Each start's best pose, and
q = 0 itself, are the candidates; the one with the least loss on CHECK_POINTS fresh samples wins
(a pose picked on the descent's own samples fits their noise), so the fit never ends worse than not
moving at all by its own objective.
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
GRID = 36  # values per joint of the grid start (10 degrees apart over a full turn)
SWEEPS = 2  # coordinate sweeps of the grid start
REFINE = 3  # finer sweeps after them
CHECK_POINTS = 4096  # fresh rest samples that judge the candidates


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


def search_span(vertices: np.ndarray, articulation: Articulation, hold_limits: bool) -> tuple[np.ndarray, np.ndarray]:
    """(J,) lower and upper joint values the fit searches (rad or mesh units): with hold_limits, the
    articulation's limits (a revolute joint's within one turn); otherwise a revolute joint's full turn
    and a prismatic joint's limits widened by the moving part's own length along its axis each way (a
    readout's limits are what the learned motions and contacts suggest; where the part is, the
    observation says)."""
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    lower, upper = [], []
    for joint in articulation.joints:
        revolute = joint.type == "revolute"
        lo, hi = (max(joint.lower, -np.pi), min(joint.upper, np.pi)) if revolute else (joint.lower, joint.upper)
        if not hold_limits:
            moving = vertices[articulation.subtree(joint.child)] @ joint.axis
            length = float(np.ptp(moving)) if len(moving) else 0.0
            lo, hi = (-np.pi, np.pi) if revolute else (min(lo, 0.0) - length, max(hi, 0.0) + length)
        default = SPAN_WITHOUT_LIMIT[0] if revolute else SPAN_WITHOUT_LIMIT[1] * diagonal
        lower.append(lo if np.isfinite(lo) else -default)
        upper.append(hi if np.isfinite(hi) else default)
    return np.array(lower), np.array(upper)


def grid_start(losses, lower: np.ndarray, upper: np.ndarray, count: int = GRID, sweeps: int = SWEEPS) -> np.ndarray:
    """(J,) joint values from coordinate sweeps over a grid: joint by joint, the best of `count` values
    across its span, the others where the sweep left them (first at 0), `sweeps` times over; then the
    same over 9 values within one step of each value, the step a quarter as long each time (REFINE
    times). It finds what a descent would leave where it starts: a small part (a knob) whose share of
    the Chamfer is small, a pole hanging the other way once its cart has moved."""
    q = np.zeros(len(lower))
    step = (upper - lower) / (count - 1)
    with torch.no_grad():
        for level in range(sweeps + REFINE):
            for j in range(len(q)):
                values = (np.linspace(lower[j], upper[j], count) if level < sweeps
                          else np.clip(q[j] + step[j] * np.linspace(-1.0, 1.0, 9), lower[j], upper[j]))
                poses = np.tile(q, (len(values), 1))
                poses[:, j] = values
                q[j] = values[int(torch.argmin(losses(torch.as_tensor(poses))))]
            if level >= sweeps:
                step = step / 4.0
    return q


def fit_joint_pose(vertices, faces, articulation: Articulation, observed, partial: bool = False,
                   points: int = 1024, starts: int = 8, steps: int = 150, rate: float = 0.03,
                   patience: int = 20, seed: int = 0, hold_limits: bool = False) -> JointPoseFit:
    """See the module docstring; vertices (n, 3) and observed (M, 3) in the same frame and units."""
    V = np.asarray(vertices, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64)
    names = [joint.name for joint in articulation.joints]
    if not articulation.joints:
        return JointPoseFit(np.zeros(0), names, V.copy(), float("nan"), 0)
    rng = np.random.default_rng(seed)
    per_face = face_labels(F, articulation.labels)
    fitted_on, judged_on = (sample_surface(V, F, count, rng) for count in (points, CHECK_POINTS))
    target = torch.as_tensor(np.asarray(observed, dtype=np.float64).reshape(-1, 3))
    diagonal = float(np.linalg.norm(np.ptp(V, axis=0)))
    prismatic = np.array([joint.type == "prismatic" for joint in articulation.joints])
    scale = torch.as_tensor(np.where(prismatic, diagonal, 1.0))
    lower, upper = search_span(V, articulation, hold_limits)

    def losses(values: torch.Tensor, samples=fitted_on) -> torch.Tensor:
        """(S,) Chamfer of the poses at joint values (S, J), rad or mesh units, from the rest surface's
        samples moved with their parts."""
        R, t = part_transforms(articulation, values)
        parts = torch.as_tensor(per_face[samples.face_ids])
        posed = (R[:, parts] @ torch.as_tensor(samples.points)[None, :, :, None])[..., 0] + t[:, parts]
        return chamfer_l2(posed, target, one_sided=partial)

    first = np.stack([np.zeros(len(names)), grid_start(losses, lower, upper)])
    draws = rng.uniform(lower, upper, size=(max(starts - len(first), 0), len(names)))
    u = torch.tensor(np.concatenate([first, draws]) / scale.numpy(), requires_grad=True)
    low, high = torch.as_tensor(lower) / scale, torch.as_tensor(upper) / scale
    optimiser = torch.optim.Adam([u], lr=rate)

    kept_u, kept_loss = u.detach().clone(), torch.full((len(u),), np.inf, dtype=u.dtype)  # each start's best
    best_so_far, quiet, taken = np.inf, 0, 0
    while taken < steps:
        taken += 1
        optimiser.zero_grad(set_to_none=True)
        current = losses(u * scale)
        current.sum().backward()
        with torch.no_grad():
            better = current < kept_loss
            kept_u[better], kept_loss[better] = u[better], current[better]
        optimiser.step()
        with torch.no_grad():
            u.copy_(torch.maximum(torch.minimum(u, high), low))
        least = float(current.detach().min())
        quiet = quiet + 1 if least > best_so_far * (1.0 - 1e-4) else 0
        best_so_far = min(best_so_far, least)
        if quiet >= patience:  # the best start has stopped improving
            break
    with torch.no_grad():
        candidates = torch.cat([torch.zeros_like(u[:1]), kept_u, u])  # and q = 0 itself, never worse than it
        final = losses(candidates * scale, judged_on)  # samples the descent never saw: no selection bias
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
