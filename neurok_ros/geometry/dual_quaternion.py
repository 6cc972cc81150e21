"""Unit dual quaternions for per-point rigid transforms.

Layout: (..., 8) = real quaternion (w, x, y, z) then dual quaternion (w, x, y, z).
A rigid transform x -> R x + t is  q_r = quaternion(R),  q_d = 0.5 * (0, t) * q_r.
Every function works on numpy arrays and on torch tensors (autograd and forward-mode AD included).
"""
from __future__ import annotations

import numpy as np

try:  # torch is optional for the geometry core; data generation uses numpy only.
    import torch
except ImportError:  # pragma: no cover - torch is a pinned dependency
    torch = None


def _is_torch(x) -> bool:
    return torch is not None and isinstance(x, torch.Tensor)


def _stack(items, like):
    return torch.stack(items, dim=-1) if _is_torch(like) else np.stack(items, axis=-1)


def _cat(items, like):
    return torch.cat(items, dim=-1) if _is_torch(like) else np.concatenate(items, axis=-1)


def _sqrt(x):
    return torch.sqrt(x) if _is_torch(x) else np.sqrt(x)


def _sum_last(x, keepdim=True):
    return x.sum(dim=-1, keepdim=keepdim) if _is_torch(x) else x.sum(axis=-1, keepdims=keepdim)


def _where(cond, a, b):
    return torch.where(cond, a, b) if _is_torch(cond) else np.where(cond, a, b)


# ----------------------------------------------------------------------------------------------
# Quaternions (..., 4), (w, x, y, z)
# ----------------------------------------------------------------------------------------------
def quaternion_multiply(a, b):
    """Hamilton product a * b; (..., 4) x (..., 4) -> (..., 4)."""
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return _stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        a,
    )


def quaternion_conjugate(q):
    """(w, x, y, z) -> (w, -x, -y, -z); (..., 4)."""
    return _cat([q[..., :1], -q[..., 1:]], q)


def quaternion_to_matrix(q):
    """Unit quaternion (..., 4) -> rotation matrix (..., 3, 3)."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = [
        _stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], q),
        _stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], q),
        _stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], q),
    ]
    return torch.stack(rows, dim=-2) if _is_torch(q) else np.stack(rows, axis=-2)


def matrix_to_quaternion(R):
    """Rotation matrix (..., 3, 3) -> unit quaternion (..., 4) with w >= 0.

    Shepperd's method: of the four algebraically equivalent formulas, the one with the largest
    denominator is taken for each matrix, so it stays accurate near 180-degree rotations.
    """
    m00, m01, m02 = R[..., 0, 0], R[..., 0, 1], R[..., 0, 2]
    m10, m11, m12 = R[..., 1, 0], R[..., 1, 1], R[..., 1, 2]
    m20, m21, m22 = R[..., 2, 0], R[..., 2, 1], R[..., 2, 2]
    candidates = _stack(
        [
            _stack([1 + m00 + m11 + m22, m21 - m12, m02 - m20, m10 - m01], R),
            _stack([m21 - m12, 1 + m00 - m11 - m22, m01 + m10, m02 + m20], R),
            _stack([m02 - m20, m01 + m10, 1 - m00 + m11 - m22, m12 + m21], R),
            _stack([m10 - m01, m02 + m20, m12 + m21, 1 - m00 - m11 + m22], R),
        ],
        R,
    )  # (..., 4 components, 4 candidates); candidate j has 4 q_j^2 at component j
    diag = _stack([candidates[..., 0, 0], candidates[..., 1, 1], candidates[..., 2, 2],
                   candidates[..., 3, 3]], R)
    if _is_torch(R):
        best = diag.argmax(dim=-1)
        index = best[..., None, None].expand(*best.shape, 4, 1)
        q = torch.gather(candidates, -1, index)[..., 0]
        scale = torch.gather(diag, -1, best[..., None]).clamp_min(1e-12)
    else:
        best = diag.argmax(axis=-1)
        q = np.take_along_axis(candidates, best[..., None, None], axis=-1)[..., 0]
        scale = np.maximum(np.take_along_axis(diag, best[..., None], axis=-1), 1e-12)
    q = q / (2 * _sqrt(scale))
    q = q / _sqrt(_sum_last(q * q))
    return _where(q[..., :1] < 0, -q, q)


# ----------------------------------------------------------------------------------------------
# Dual quaternions (..., 8)
# ----------------------------------------------------------------------------------------------
def identity(shape=(), like=None):
    """Identity transforms of batch shape `shape`: (*shape, 8), float32 numpy unless `like` is a tensor."""
    if _is_torch(like):
        out = torch.zeros(*shape, 8, dtype=like.dtype, device=like.device)
    else:
        out = np.zeros((*shape, 8), dtype=np.float32 if like is None else like.dtype)
    out[..., 0] = 1
    return out


def from_rotation_translation(R, t):
    """(..., 3, 3) rotation and (..., 3) translation -> (..., 8) unit dual quaternion."""
    q_r = matrix_to_quaternion(R)
    return from_quaternion_translation(q_r, t)


def from_quaternion_translation(q_r, t):
    """(..., 4) unit quaternion and (..., 3) translation -> (..., 8)."""
    t_quat = _cat([t[..., :1] * 0, t], t)
    q_d = 0.5 * quaternion_multiply(t_quat, q_r)
    return _cat([q_r, q_d], q_r)


def to_rotation_translation(dq):
    """(..., 8) unit dual quaternion -> rotation (..., 3, 3), translation (..., 3)."""
    q_r, q_d = dq[..., :4], dq[..., 4:]
    t = 2 * quaternion_multiply(q_d, quaternion_conjugate(q_r))[..., 1:]
    return quaternion_to_matrix(q_r), t


def compose(a, b):
    """The transform `apply(a, apply(b, x))`; (..., 8) x (..., 8) -> (..., 8)."""
    a_r, a_d = a[..., :4], a[..., 4:]
    b_r, b_d = b[..., :4], b[..., 4:]
    return _cat(
        [quaternion_multiply(a_r, b_r), quaternion_multiply(a_r, b_d) + quaternion_multiply(a_d, b_r)],
        a,
    )


def inverse(dq):
    """Inverse of a unit dual quaternion (its quaternion conjugate); (..., 8)."""
    return _cat([quaternion_conjugate(dq[..., :4]), quaternion_conjugate(dq[..., 4:])], dq)


def canonical_sign(dq):
    """(..., 8) with the sign flipped where the real quaternion's w < 0 (the same transform)."""
    return _where(dq[..., :1] < 0, -dq, dq)


def normalise(dq, eps: float = 1e-12):
    """Project (..., 8) onto unit dual quaternions: |q_r| = 1 and q_r . q_d = 0."""
    q_r, q_d = dq[..., :4], dq[..., 4:]
    norm = _sqrt(_sum_last(q_r * q_r))
    norm = norm.clamp_min(eps) if _is_torch(norm) else np.maximum(norm, eps)
    q_r = q_r / norm
    q_d = q_d / norm
    q_d = q_d - _sum_last(q_r * q_d) * q_r
    return _cat([q_r, q_d], dq)


def blend(dqs, weights):
    """Dual-quaternion linear blending.

    dqs: (..., J, 8) unit dual quaternions; weights: (..., J), non-negative, any sum.
    Each transform is sign-aligned with the first (antipodal quaternions are the same rotation),
    then the weighted sum is normalised. Returns (..., 8).
    """
    reference = dqs[..., :1, :4]
    sign = _sum_last(dqs[..., :4] * reference)
    sign = _where(sign < 0, -1.0 + 0 * sign, 1.0 + 0 * sign)
    weighted = dqs * sign * weights[..., None]
    blended = weighted.sum(dim=-2) if _is_torch(weighted) else weighted.sum(axis=-2)
    return normalise(blended)


def apply(dq, points):
    """Transform points (..., 3) by (..., 8) (broadcasting); returns (..., 3)."""
    q_r, q_d = dq[..., :4], dq[..., 4:]
    w, v = q_r[..., :1], q_r[..., 1:]
    # Rotation by the Rodrigues-like form: p + 2 w (v x p) + 2 v x (v x p)
    uv = _cross(v, points)
    rotated = points + 2 * (w * uv + _cross(v, uv))
    t = 2 * quaternion_multiply(q_d, quaternion_conjugate(q_r))[..., 1:]
    return rotated + t


def _cross(a, b):
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    return _stack([ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx], a)
