"""Are the prior's samples valid poses? Lid angles of laptops decoded from prior draws (the posterior
bank's when the checkpoint has one and the encoding uses it, else z ~ N(mu, I)).

An unseen laptop (a test-split instance, posed at the frame whose lid angle is nearest open_angle)
is encoded and `count` prior draws are decoded. Each sample is compared with the input pose by two
rigid fits: the lid's vertices and the base's vertices. Per sample:
- lid angle: the rotation of the lid relative to the base, about the true hinge axis (degrees);
- lid bend / base bend: RMS residual of each rigid fit, as a fraction of the part's size;
- hinge gap: how far the lid's hinge point has moved away from the base's hinge point, as a fraction
  of the lid's size (a lid that turns about the wrong line detaches from its hinge).
A sample is valid when all three fractions are under `tolerance`. Distinct angles: valid samples
whose lid angles differ from every other counted one by at least `min_separation_deg`.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from neurok_ros.data.deformable.kabsch_fit import fit_rotations
from neurok_ros.data.instance_format import Instance
from neurok_ros.kinematics.diverse_samples import diverse_latents
from neurok_ros.kinematics.instance import EncodingConfig, encode_mesh


def rigid_fit(frames: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per frame, the least-squares rigid motion of the masked vertices from frame 0 (frames
    (T, n, 3), metres): rotations (T, 3, 3), translations (T, 3) and the RMS residual (T,) metres."""
    index = np.flatnonzero(mask)[None]  # one neighbourhood: the whole part
    rotations, translations = fit_rotations(frames[0], frames, index, np.ones(index.shape, dtype=bool),
                                            exact_at_vertex=False)
    rotations, translations = rotations[:, 0], translations[:, 0]
    fitted = np.einsum("tab,nb->tna", rotations, frames[0][mask]) + translations[:, None]
    residuals = np.sqrt(((fitted - frames[:, mask]) ** 2).sum(-1).mean(-1))
    return rotations, translations, residuals


def first_hinge(inst: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The instance's first joint: (n,) bool of the vertices it moves (its child parts), its axis
    (3,) and a pivot point (3,) on it, mesh frame, metres."""
    joint = inst.joints[0]
    moving = np.isin(np.asarray(inst.part_ids), joint["child_parts"])
    return moving, np.asarray(joint["axis"], dtype=np.float64), np.asarray(joint["pivot"], dtype=np.float64)


def frame_nearest_angle(inst: Instance, angle: float) -> int:
    """Index of the frame whose first joint value is nearest `angle` (rad)."""
    return int(np.argmin(np.abs(np.asarray(inst.joint_values)[:, 0] - angle)))


def part_size(vertices: np.ndarray) -> float:
    """Bounding-box diagonal of (n, 3) vertices, metres."""
    return float(np.linalg.norm(np.ptp(vertices, axis=0)))


def distinct_angles(angles_deg: np.ndarray, min_separation_deg: float) -> int:
    """How many of the angles are at least min_separation_deg apart (greedy over sorted values)."""
    count, last = 0, -np.inf
    for angle in np.sort(np.asarray(angles_deg, dtype=np.float64)):
        if angle - last >= min_separation_deg:
            count, last = count + 1, angle
    return count


def lid_sample_measures(vertices: np.ndarray, lid: np.ndarray, axis: np.ndarray, pivot: np.ndarray,
                        samples: np.ndarray, tolerance: float = 0.02, min_separation_deg: float = 2.0) -> dict:
    """The module's per-sample measurements. vertices (n, 3) metres: the input pose; lid (n,) bool;
    axis (3,) unit hinge axis and pivot (3,) a point on it, input frame; samples (S, n, 3) metres."""
    frames = np.concatenate([np.asarray(vertices, np.float64)[None], np.asarray(samples, np.float64)])
    lid_R, lid_t, lid_rms = (a[1:] for a in rigid_fit(frames, lid))
    base_R, base_t, base_rms = (a[1:] for a in rigid_fit(frames, ~lid))
    relative = np.einsum("sba,sbc->sac", base_R, lid_R)  # base^-1 o lid, rotation part
    angles = np.degrees(Rotation.from_matrix(relative).as_rotvec() @ axis)
    hinge_on_lid = np.einsum("sab,b->sa", lid_R, pivot) + lid_t
    hinge_on_base = np.einsum("sab,b->sa", base_R, pivot) + base_t
    lid_size, base_size = part_size(frames[0][lid]), part_size(frames[0][~lid])
    lid_bend, base_bend = lid_rms / lid_size, base_rms / base_size
    gap = np.linalg.norm(hinge_on_lid - hinge_on_base, axis=1) / lid_size
    valid = (lid_bend < tolerance) & (base_bend < tolerance) & (gap < tolerance)
    return {"tolerance": tolerance, "angles_deg": angles.tolist(), "lid_bend": lid_bend.tolist(),
            "base_bend": base_bend.tolist(), "hinge_gap": gap.tolist(), "valid": valid.tolist(),
            "valid_count": int(valid.sum()),
            "distinct_valid_angles": distinct_angles(angles[valid], min_separation_deg),
            "angle_range_deg": float(np.ptp(angles))}


def prior_lid_samples(model, inst: Instance, name: str = "", count: int = 8, seed: int = 0,
                      open_angle: float = 1.1, temperature: float = 1.0, tolerance: float = 0.02,
                      min_separation_deg: float = 2.0, encoding: EncodingConfig = EncodingConfig(),
                      pool: int = 0) -> dict:
    """lid_sample_measures of `count` prior samples of a laptop-like instance (its first joint the lid
    hinge), posed at the frame whose lid angle is nearest open_angle rad; also returns the samples
    (count, n, 3) and faces. pool > count: the samples are count of pool draws, chosen to differ
    (kinematics/diverse_samples.py); else count plain draws."""
    lid, axis, pivot = first_hinge(inst)
    pose = frame_nearest_angle(inst, open_angle)
    V = np.asarray(inst.frames[pose], dtype=np.float64)
    F = np.asarray(inst.faces, dtype=np.int64)
    instance = encode_mesh(model, V, F, encoding)
    samples = instance.decode(z=diverse_latents(instance, count, pool, seed, temperature))
    measures = lid_sample_measures(V, lid, axis, pivot, samples, tolerance, min_separation_deg)
    return {"file": name, "joint_angle_deg": float(np.degrees(inst.joint_values[pose][0])), "count": count,
            "temperature": temperature, "k_q": instance.k_q, "seed": seed, "pool": max(pool, count),
            "prior": "posterior bank" if instance.motion_offsets is not None else "N(mu, I)", **measures,
            "vertices": V, "faces": F, "samples": samples}
