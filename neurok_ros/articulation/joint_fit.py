"""One joint from the relative motions of a child part in its parent's frame.

    fit = fit_joint(R, t, points)     # R (E, 3, 3), t (E, 3): child relative to parent; points (M, 3)

The learned motions do not all agree (some come from training shapes hinged elsewhere), so the fit is
a consensus over motions: every motion proposes the revolute line or the sliding direction it moves
the child along by itself, each proposal counts the motions it explains to within `tolerance` (RMS
point error), and the proposal that explains the most is refitted on those motions alone
(`fit_joint`). Each model is fitted as follows:
  revolute   rotation by angle v_e about the line (axis a, origin o): the axis is the principal
             direction of the rotation vectors, the origin the least-squares solution of
             (I - R_e) o = t_e over all motions (the point of that line nearest the points' centre);
  prismatic  translation by v_e along a: the principal direction of the translations.
The residual is the RMS distance between the points under the motions and under the model (points'
units); values v_e are the joint values of the motions (rad or points' units).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class JointFit:
    """type "revolute" | "prismatic"; axis (3,) unit; origin (3,) on the axis; values (E,) of the
    motions it was fitted on; residual (RMS point error of the model); extent (RMS point motion it
    explains); support: the fraction of all motions it explains."""

    type: str
    axis: np.ndarray
    origin: np.ndarray
    values: np.ndarray
    residual: float
    extent: float
    support: float = 1.0


def rotation_vectors(R: np.ndarray) -> np.ndarray:
    """(E, 3, 3) rotations -> (E, 3) axis * angle (angle in [0, pi])."""
    cos = np.clip((np.trace(R, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    skew = np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]], axis=1)
    sin = np.sin(angle)
    small = sin < 1e-6
    axis = skew / np.where(small, 1.0, 2.0 * sin)[:, None]
    # near pi the skew part vanishes: take the axis from the symmetric part
    near_pi = small & (angle > 1.0)
    for e in np.flatnonzero(near_pi):
        B = (R[e] + np.eye(3)) / 2.0
        axis[e] = B[np.argmax(np.diag(B))] / np.sqrt(max(np.max(np.diag(B)), 1e-12))
    axis /= np.maximum(np.linalg.norm(axis, axis=1, keepdims=True), 1e-12)
    return np.where(small[:, None] & ~near_pi[:, None], skew / 2.0, axis * angle[:, None])


def axis_rotation(axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rotations (E, 3, 3) by angles (E,) about the unit axis (3,) (Rodrigues)."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    s, c = np.sin(angles)[:, None, None], np.cos(angles)[:, None, None]
    return np.eye(3) + s * K + (1 - c) * (K @ K)


def principal_direction(vectors: np.ndarray) -> np.ndarray:
    """The unit direction (3,) along which the rows of vectors (E, 3) spread most about 0, signed so
    that most of them point along it."""
    _, _, vh = np.linalg.svd(vectors, full_matrices=False)
    direction = vh[0]
    return direction if (vectors @ direction).sum() >= 0 else -direction


def revolute_fit(R: np.ndarray, t: np.ndarray, points: np.ndarray) -> JointFit:
    omega = rotation_vectors(R)
    axis = principal_direction(omega)
    angles = omega @ axis
    A = (np.eye(3)[None] - R).reshape(-1, 3)
    centre = points.mean(0)
    origin = np.linalg.lstsq(A, t.reshape(-1), rcond=1e-6)[0]
    origin = origin + axis * ((centre - origin) @ axis)
    model_R = axis_rotation(axis, angles)
    model_t = origin - np.einsum("eij,j->ei", model_R, origin)
    return _scored("revolute", axis, origin, angles, model_R, model_t, R, t, points)


def prismatic_fit(R: np.ndarray, t: np.ndarray, points: np.ndarray) -> JointFit:
    centre = points.mean(0)
    shift = np.einsum("eij,j->ei", R, centre) + t - centre   # how the centre moves
    axis = principal_direction(shift)
    values = shift @ axis
    model_R = np.broadcast_to(np.eye(3), R.shape)
    return _scored("prismatic", axis, centre, values, model_R, values[:, None] * axis, R, t, points)


def _scored(kind, axis, origin, values, model_R, model_t, R, t, points) -> JointFit:
    actual = np.einsum("eij,mj->emi", R, points) + t[:, None]
    modelled = np.einsum("eij,mj->emi", model_R, points) + model_t[:, None]
    residual = float(np.sqrt(np.square(actual - modelled).sum(-1).mean()))
    extent = float(np.sqrt(np.square(actual - points[None]).sum(-1).mean()))
    return JointFit(kind, axis, origin, values, residual, extent)


def model_errors(kind: str, axis: np.ndarray, origin: np.ndarray, R: np.ndarray, t: np.ndarray,
                 points: np.ndarray) -> np.ndarray:
    """(E,) RMS point error of each motion under the best value of the 1-DoF model (kind, axis, origin)."""
    actual = np.einsum("eij,mj->emi", R, points) + t[:, None]
    if kind == "revolute":
        angles = rotation_vectors(R) @ axis
        model_R = axis_rotation(axis, angles)
        modelled = np.einsum("eij,mj->emi", model_R, points - origin) + origin
    else:
        shift = (actual - points[None]).mean(1) @ axis
        modelled = points[None] + shift[:, None, None] * axis
    return np.sqrt(np.square(actual - modelled).sum(-1).mean(1))


def fit_joint(R: np.ndarray, t: np.ndarray, points: np.ndarray, tolerance: float = 0.02, proposals: int = 12,
              probe_points: int = 64) -> JointFit:
    """The 1-DoF joint (module docstring) of the child's motions R (E, 3, 3), t (E, 3) relative to
    its parent, for its points (M, 3); tolerance in the points' units. The `proposals` motions that
    move the child most propose models, scored on `probe_points` of its points (evenly spread)."""
    probe = points[np.linspace(0, len(points) - 1, min(probe_points, len(points))).astype(int)]
    moved = np.einsum("eij,mj->emi", R, probe) + t[:, None]
    reach = np.sqrt(np.square(moved - probe[None]).sum(-1).mean(1))
    best: dict[str, tuple] = {}
    for e in np.argsort(-reach)[:proposals]:
        if reach[e] < tolerance:
            break  # a motion that hardly moves the child proposes nothing
        for fitter in (revolute_fit, prismatic_fit):
            proposal = fitter(R[e:e + 1], t[e:e + 1], probe)
            inliers = model_errors(proposal.type, proposal.axis, proposal.origin, R, t, probe) < tolerance
            refit = fitter(R[inliers], t[inliers], probe) if inliers.any() else proposal
            key = (int(inliers.sum()), -refit.residual)
            if proposal.type not in best or key > best[proposal.type][0]:
                best[proposal.type] = (key, fitter, inliers)
    if not best:  # nothing moves: the plain fits over every motion
        revolute, prismatic = revolute_fit(R, t, points), prismatic_fit(R, t, points)
        return prismatic if prismatic.residual <= revolute.residual else revolute
    # the two kinds compete on the motions either explains: a door turned a little is nearly a
    # slide, a slide is no rotation at all, so the smaller residual there decides
    union = np.logical_or.reduce([inliers for _, _, inliers in best.values()])
    fits = {kind: fitter(R[union], t[union], probe) for kind, (_, fitter, _) in best.items()}
    kind = min(fits, key=lambda k: fits[k].residual)
    _, fitter, inliers = best[kind]
    fit = fitter(R[inliers], t[inliers], points)
    fit.support = float(inliers.mean())
    return fit
