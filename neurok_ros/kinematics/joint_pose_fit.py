"""Pose fitting in joint coordinates: the joint values of an articulation that best explain observed
surface points, every part moved by its exact rigid motion along the kinematic tree.

    fit = fit_joint_pose(vertices, faces, articulation, observed)
    fit.q             (J,) float64: rad (revolute) or mesh units (prismatic), the input pose = 0
    fit.vertices      (n, 3) float64: the mesh posed at fit.q, its own frame, units and vertex order
    fit.articulation  the articulation with the joint lines the fit settled on (parts and limits kept)
    fit.loss          the fit's Chamfer objective (squared mesh units)

The objective is the IK's Chamfer-L2 (objectives.chamfer_l2) between `points` area-uniform samples
of the posed surface and the observed points (with `partial`, only observed -> posed: a depth view
sees part of the surface). The values searched are each joint's span (search_span): a full turn for
a revolute joint and the limits widened by the part's own length for a prismatic one, since a
readout's limits are only what its evidence suggests; with hold_limits, the articulation's limits
(a URDF you trust).
- Starts: q = 0; the grid start (grid_start: coordinate sweeps over a grid of each joint's span,
  then finer ones; a revolute joint's first sweeps also try its line through its own part's centre,
  kept where it fits better by CENTRE_GAIN: a knob or a wheel hinged beside itself); and uniform
  draws in the span. All descend together with Adam on q, the prismatic values in units of the
  mesh's diagonal, clamped to the span, until the best start has not improved by 0.01 % for
  `patience` steps. Each start's best pose, and q = 0 itself, are the candidates; the one with the
  least loss on CHECK_POINTS fresh samples wins (a pose picked on the descent's own samples fits
  their noise), so the fit never ends worse than not moving at all by its own objective. Then each
  joint goes back to 0 where the observation does not ask for its value (still_where_unseen).
- Lines: the winner's joint lines are then refined with its values (refine_lines): each axis may
  tilt by up to AXIS_TILT and each line shift across itself by up to LINE_SHIFT of the diagonal,
  where the joint moved its part at least MOVED of the diagonal on average (moved_far). A
  readout's lines are a few degrees and centimetres off, and a part turned far shows where its line
  is (a fridge door at 2.7 rad). The refined pose is kept where it is nearer on the fresh samples.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

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
CENTRE_GAIN = 0.02  # a joint's line through its part's centre is kept where it fits 2 % better
SWEEP_GAIN = 0.01  # a sweep moves a joint only where that lowers the loss by 1 %
MOVED = 0.02  # of the diagonal: a line is refined only where its part's samples moved this far on average
UNSEEN = 0.002  # a joint goes back to 0 where that raises the chosen pose's loss by at most 0.2 %
AXIS_TILT = 0.2  # rad, per component of the axis's change across itself
LINE_SHIFT = 0.05  # of the diagonal, per component of the line's shift across itself
LINE_STEPS = 150  # Adam steps of refine_lines


@dataclass
class JointPoseFit:
    """q (J,), names (J,), vertices (n, 3), loss, the number of descent steps and the articulation with
    the fitted lines; see the module docstring."""

    q: np.ndarray
    names: list
    vertices: np.ndarray
    loss: float
    steps: int
    articulation: Articulation | None = None

    def joint_values(self) -> dict:
        return {name: float(value) for name, value in zip(self.names, self.q)}


def axis_rotations(axes: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """(..., 3, 3) rotations by angles (...) about unit axes (..., 3) or (3,) (Rodrigues)."""
    x, y, z = axes.expand(*angles.shape, 3).unbind(-1)
    zero = torch.zeros_like(x)
    k = torch.stack([torch.stack([zero, -z, y], -1), torch.stack([z, zero, -x], -1),
                     torch.stack([-y, x, zero], -1)], -2)
    s, c = torch.sin(angles)[..., None, None], torch.cos(angles)[..., None, None]
    return torch.eye(3, dtype=angles.dtype) + s * k + (1.0 - c) * (k @ k)


def joint_lines(articulation: Articulation, dtype=torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """(axes (J, 3), origins (J, 3)) of the articulation's joints."""
    return (torch.as_tensor(np.array([j.axis for j in articulation.joints], dtype=np.float64), dtype=dtype),
            torch.as_tensor(np.array([j.origin for j in articulation.joints], dtype=np.float64), dtype=dtype))


def part_transforms(articulation: Articulation, q: torch.Tensor, lines=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Each part's rigid motion at joint values q (S, J): R (S, P, 3, 3) and t (S, P, 3) with
    x = R x_rest + t, composed from the root along the joints (parents before children); lines:
    (axes, origins), each (J, 3) or (S, J, 3), instead of the articulation's own."""
    S, P = q.shape[0], articulation.num_parts
    axes, origins = (line.expand(S, -1, 3) for line in (lines or joint_lines(articulation, q.dtype)))
    rotations = [torch.eye(3, dtype=q.dtype).expand(S, 3, 3)] * P
    translations = [torch.zeros(S, 3, dtype=q.dtype)] * P
    for j, joint in enumerate(articulation.joints):
        axis, origin = axes[:, j], origins[:, j]
        if joint.type == "revolute":
            local_r = axis_rotations(axis, q[:, j])
            local_t = origin - (local_r @ origin[..., None])[..., 0]
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


def centre_lines(vertices: np.ndarray, faces: np.ndarray, per_face: np.ndarray, articulation: Articulation) -> list:
    """Per joint, the point where a line along its axis through its own part's area centroid meets
    the plane normal to the axis through its origin (revolute joints whose part has area), or None."""
    from neurok_ros.geometry.mesh_cleaning import face_double_areas

    out = []
    for joint in articulation.joints:
        own = faces[per_face == joint.child]
        areas = face_double_areas(vertices, own) if len(own) else np.zeros(0)
        if joint.type != "revolute" or areas.sum() <= 0:
            out.append(None)
            continue
        centre = (areas[:, None] * vertices[own].mean(1)).sum(0) / areas.sum()
        out.append(centre - joint.axis * ((centre - joint.origin) @ joint.axis))
    return out


def grid_start(losses, lower: np.ndarray, upper: np.ndarray, lines, centres: list, count: int = GRID,
               sweeps: int = SWEEPS) -> tuple[np.ndarray, torch.Tensor]:
    """(q (J,), origins (J, 3)) from coordinate sweeps over a grid: joint by joint, the best of `count`
    values across its span, the others where the sweep left them (first at 0), `sweeps` times over;
    then the same over 9 values within one step of each value, the step a quarter as long each time
    (REFINE times); a sweep moves a joint only where that lowers the loss by SWEEP_GAIN (a sliver of
    a part turned by chance would fit the samples' noise). In the first sweeps a revolute joint also
    tries its line through its part's centre (centres: per joint a point or None), kept where its best
    is CENTRE_GAIN lower. It finds what a descent would leave where it starts: a small part (a knob)
    whose share of the Chamfer is small, a pole hanging the other way once its cart has moved.
    lines: (axes, origins) (J, 3) each."""
    axes, origins = lines[0], lines[1].clone()
    q = np.zeros(len(lower))
    step = (upper - lower) / (count - 1)
    with torch.no_grad():
        for level in range(sweeps + REFINE):
            for j in range(len(q)):
                values = (np.linspace(lower[j], upper[j], count) if level < sweeps
                          else np.clip(q[j] + step[j] * np.linspace(-1.0, 1.0, 9), lower[j], upper[j]))
                poses = np.tile(q, (len(values), 1))
                poses[:, j] = values
                scores = losses(torch.as_tensor(np.vstack([q, poses])), (axes, origins))
                now, line = float(scores[0]), origins
                best, least = int(torch.argmin(scores[1:])), float(scores[1:].min())
                if level < sweeps and centres[j] is not None:
                    moved = origins.clone()
                    moved[j] = torch.as_tensor(centres[j], dtype=origins.dtype)
                    other = losses(torch.as_tensor(poses), (axes, moved))
                    if float(other.min()) < (1.0 - CENTRE_GAIN) * least:
                        line, best, least = moved, int(torch.argmin(other)), float(other.min())
                if least < (1.0 - SWEEP_GAIN) * now:  # else the observation does not need it
                    q[j], origins = values[best], line
            if level >= sweeps:
                step = step / 4.0
    return q, origins


def refine_lines(losses, u: torch.Tensor, scale: torch.Tensor, lines, diagonal: float, low: torch.Tensor,
                 high: torch.Tensor, free: torch.Tensor, steps: int = LINE_STEPS,
                 rate: float = 0.005) -> tuple[torch.Tensor, tuple]:
    """(u (J,), lines) with the joint values (u: q over scale) and the lines (axes, origins) (J, 3)
    descended together: each axis tilted and each line shifted across itself, within AXIS_TILT and
    LINE_SHIFT * diagonal per component, the lines of the joints that `free` (J,) bool marks only
    (module docstring)."""
    axes, origins = lines
    free = free.to(axes.dtype)[:, None]
    u = u.detach().clone().requires_grad_(True)
    tilt = torch.zeros_like(axes, requires_grad=True)
    shift = torch.zeros_like(origins, requires_grad=True)

    def moved() -> tuple[torch.Tensor, torch.Tensor]:
        across_tilt = free * (tilt - (tilt * axes).sum(1, keepdim=True) * axes)
        across_shift = free * (shift - (shift * axes).sum(1, keepdim=True) * axes)
        turned = axes + across_tilt
        return turned / turned.norm(dim=1, keepdim=True), origins + across_shift * diagonal

    optimiser = torch.optim.Adam([{"params": [u], "lr": 2 * rate}, {"params": [tilt, shift], "lr": rate}])
    for _ in range(steps):
        optimiser.zero_grad(set_to_none=True)
        losses((u * scale)[None], moved()).sum().backward()
        optimiser.step()
        with torch.no_grad():
            u.copy_(torch.maximum(torch.minimum(u, high), low))
            tilt.clamp_(-AXIS_TILT, AXIS_TILT)
            shift.clamp_(-LINE_SHIFT, LINE_SHIFT)
    with torch.no_grad():
        return u.detach(), tuple(line.detach() for line in moved())


def posed_samples(articulation: Articulation, values: torch.Tensor, lines, samples) -> torch.Tensor:
    """(S, N, 3) rest samples (samples: (points (N, 3), parts (N,)) tensors) moved with their parts at
    joint values (S, J) about lines (axes, origins)."""
    points, parts = samples
    R, t = part_transforms(articulation, values, lines)
    return (R[:, parts] @ points[None, :, :, None])[..., 0] + t[:, parts]


def moved_far(articulation: Articulation, q: torch.Tensor, lines, samples, far: float) -> torch.Tensor:
    """(J,) bool: whether each joint alone, at its value in q (J,), moves its child subtree's samples
    (samples: (points, parts) tensors, posed_samples) at least `far` (mesh units) on average."""
    points, parts = samples
    out = []
    for j, joint in enumerate(articulation.joints):
        alone = torch.zeros_like(q)
        alone[j] = q[j]
        subtree = torch.as_tensor(np.isin(parts.numpy(), articulation.labels[articulation.subtree(joint.child)]))
        moved = posed_samples(articulation, alone[None], lines, (points[subtree], parts[subtree]))[0]
        out.append(bool(subtree.any()) and float((moved - points[subtree]).norm(dim=1).mean()) >= far)
    return torch.tensor(out)


def still_where_unseen(losses, u: torch.Tensor, scale: torch.Tensor, lines, samples, loss: float):
    """(u, loss) with each joint, in turn, back at 0 wherever that raises the loss on `samples` by at
    most UNSEEN: a value the observation does not ask for stays at the input pose (from one view, a
    part nobody sees gets no pull, and a random start leaves it anywhere; a wheel's half turn)."""
    u = u.clone()
    with torch.no_grad():
        for j in range(len(u)):
            if float(u[j]) == 0.0:
                continue
            trial = u.clone()
            trial[j] = 0.0
            trial_loss = float(losses((trial * scale)[None], lines, samples)[0])
            if trial_loss <= loss * (1.0 + UNSEEN):
                u, loss = trial, min(loss, trial_loss)
    return u, loss


def fit_joint_pose(vertices, faces, articulation: Articulation, observed, partial: bool = False,
                   points: int = 1024, starts: int = 8, steps: int = 150, rate: float = 0.03,
                   patience: int = 20, seed: int = 0, hold_limits: bool = False,
                   refine: bool = True) -> JointPoseFit:
    """See the module docstring; vertices (n, 3) and observed (M, 3) in the same frame and units;
    refine: refine the joint lines (refine_lines) after the values."""
    V = np.asarray(vertices, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64)
    names = [joint.name for joint in articulation.joints]
    if not articulation.joints:
        return JointPoseFit(np.zeros(0), names, V.copy(), float("nan"), 0, articulation)
    rng = np.random.default_rng(seed)
    per_face = face_labels(F, articulation.labels)
    fitted_on, judged_on = ((torch.as_tensor(drawn.points), torch.as_tensor(per_face[drawn.face_ids]))
                            for drawn in (sample_surface(V, F, count, rng) for count in (points, CHECK_POINTS)))
    target = torch.as_tensor(np.asarray(observed, dtype=np.float64).reshape(-1, 3))
    diagonal = float(np.linalg.norm(np.ptp(V, axis=0)))
    prismatic = np.array([joint.type == "prismatic" for joint in articulation.joints])
    scale = torch.as_tensor(np.where(prismatic, diagonal, 1.0))
    lower, upper = search_span(V, articulation, hold_limits)

    def losses(values: torch.Tensor, lines, samples=fitted_on) -> torch.Tensor:
        """(S,) Chamfer of the poses at joint values (S, J), rad or mesh units, about lines (axes,
        origins), from the rest surface's samples moved with their parts."""
        return chamfer_l2(posed_samples(articulation, values, lines, samples), target, one_sided=partial)

    axes, origins = joint_lines(articulation)
    grid, origins = grid_start(losses, lower, upper, (axes, origins), centre_lines(V, F, per_face, articulation))
    lines = (axes, origins)
    draws = rng.uniform(lower, upper, size=(max(starts - 2, 0), len(names)))
    u = torch.tensor(np.concatenate([np.zeros((1, len(names))), grid[None], draws]) / scale.numpy(),
                     requires_grad=True)
    low, high = torch.as_tensor(lower) / scale, torch.as_tensor(upper) / scale
    optimiser = torch.optim.Adam([u], lr=rate)

    kept_u, kept_loss = u.detach().clone(), torch.full((len(u),), np.inf, dtype=u.dtype)  # each start's best
    best_so_far, quiet, taken = np.inf, 0, 0
    while taken < steps:
        taken += 1
        optimiser.zero_grad(set_to_none=True)
        current = losses(u * scale, lines)
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
        final = losses(candidates * scale, lines, judged_on)  # samples the descent never saw: no selection bias
        best = int(torch.argmin(final))
    chosen, loss = candidates[best], float(final[best])
    chosen, loss = still_where_unseen(losses, chosen, scale, lines, judged_on, loss)
    free = moved_far(articulation, chosen * scale, lines, fitted_on, MOVED * diagonal)
    if refine and bool(free.any()):  # a part that barely moved shows nothing of where its line is
        refined_u, refined_lines = refine_lines(losses, chosen, scale, lines, diagonal, low, high, free)
        with torch.no_grad():
            refined_loss = float(losses((refined_u * scale)[None], refined_lines, judged_on)[0])
        if refined_loss < loss:
            chosen, lines, loss = refined_u, refined_lines, refined_loss
    q = (chosen * scale).numpy().copy()
    with torch.no_grad():
        R, t = part_transforms(articulation, torch.as_tensor(q)[None], lines)
    labels = articulation.labels
    posed = np.einsum("nij,nj->ni", R[0, labels].numpy(), V) + t[0, labels].numpy()
    fitted = replace(articulation, joints=[replace(joint, axis=lines[0][j].numpy().copy(),
                                                   origin=lines[1][j].numpy().copy())
                                           for j, joint in enumerate(articulation.joints)])
    return JointPoseFit(q, names, posed, loss, taken, fitted)


def observed_chamfer(vertices, faces, observed, partial: bool = False, points: int = 4096, seed: int = 0) -> float:
    """The fit objective (objectives.chamfer_l2) of a mesh (vertices (n, 3), faces (m, 3)) against
    observed points (M, 3), from `points` samples of its surface; squared mesh units."""
    samples = sample_surface(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64), points,
                             np.random.default_rng(seed)).points
    observed = torch.as_tensor(np.asarray(observed, dtype=np.float64).reshape(-1, 3))
    return float(chamfer_l2(torch.as_tensor(samples)[None], observed, one_sided=partial)[0])
