"""The learned model against rigid-body physics on test-split objects (issue: latent dynamics).

    .venv/bin/python scripts/learned_physics_checks.py --data DATASET_DIR --out docs/physics/learned_checks.md

1. Lid under gravity: a test-split laptop posed with its lid open less than vertical, free motion
   (gravity, no elastic restoring, no damping). A rigid lid on a fixed hinge falls shut with angular
   acceleration alpha = tau / I (torque of gravity about the hinge over the lid's moment of inertia,
   from the same area-uniform masses). Measured: the lid's rotation about the hinge (Kabsch fit of the
   lid's vertices, projected on the hinge axis), its sign and size against 1/2 alpha t^2, how rigid
   the lid stays and how far the base moves.
2. Door push: a test-split door at rest, its free edge pushed at v perpendicular to the door, no
   gravity, no restoring, no damping. A rigid door turns at the constant rate v / r. Measured: the
   door's rotation about its hinge against (v / r) t, rigidity, frame motion.
Both use predict_motion with the shipped model and config/simulation.yaml otherwise.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from neurok_ros.data.instance_format import load_instance
from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.kinematics.instance import encode_mesh, load_default_model
from neurok_ros.simulation.predict import predict_motion
from neurok_ros.simulation.settings import settings_from


def kabsch(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """Rotation R (3, 3) with b ~ R (a - mean a) + mean b, and the RMS residual (same units)."""
    ca, cb = a - a.mean(0), b - b.mean(0)
    u, _, vt = np.linalg.svd(ca.T @ cb)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    rotation = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    residual = float(np.sqrt(((ca @ rotation.T - cb) ** 2).sum(1).mean()))
    return rotation, residual


def part_motion(frames: np.ndarray, mask: np.ndarray, axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: rotation of the masked vertices about `axis` (rad, right hand) and Kabsch RMS (m)."""
    angles, residuals = [], []
    for frame in frames:
        rotation, residual = kabsch(frames[0][mask], frame[mask])
        angles.append(float(Rotation.from_matrix(rotation).as_rotvec() @ axis))
        residuals.append(residual)
    return np.array(angles), np.array(residuals)


def area_weights(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Per-vertex share of the surface area (a third of each incident triangle), m^2."""
    tri = vertices[faces]
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    weights = np.zeros(len(vertices))
    np.add.at(weights, faces.ravel(), np.repeat(area / 3.0, 3))
    return weights


def lid_check(model, path: Path, open_angle: float = 1.1, duration: float = 0.3) -> dict:
    inst = load_instance(path)
    joint = inst.joints[0]  # the lid hinge; the base (its parent) does not move in the dataset
    pose = int(np.argmin(np.abs(np.asarray(inst.joint_values)[:, 0] - open_angle)))
    V = np.asarray(inst.frames[pose], dtype=np.float64)
    F = np.asarray(inst.faces, dtype=np.int64)
    lid = np.isin(np.asarray(inst.part_ids), joint["child_parts"])
    axis = np.asarray(joint["axis"], dtype=np.float64)
    pivot = np.asarray(joint["pivot"], dtype=np.float64)
    settings = settings_from(stiffness=0.0, damping=0.0, duration=duration, fps=60.0)
    instance = encode_mesh(model, V, F)
    started = time.perf_counter()
    prediction = predict_motion(instance, None, settings)
    seconds = time.perf_counter() - started
    angles, residuals = part_motion(prediction.vertices.astype(np.float64), lid, axis)
    # rigid ideal: same mass per area as the simulation (total mass over the whole surface)
    w = area_weights(V, F)
    masses = settings.mass * w / w.sum()
    r = V - pivot
    g = np.asarray(settings.gravity)
    torque = float((np.cross(r[lid], masses[lid, None] * g) @ axis).sum())
    r_perp = r[lid] - np.outer(r[lid] @ axis, axis)
    inertia = float((masses[lid] * (r_perp ** 2).sum(1)).sum())
    alpha = torque / inertia
    ideal = 0.5 * alpha * prediction.times ** 2
    base_motion = np.linalg.norm(prediction.vertices[:, ~lid] - prediction.vertices[:1, ~lid], axis=-1).max()
    early = prediction.times <= 0.1 + 1e-9
    return {"file": path.name, "joint_angle_rad": float(inst.joint_values[pose][0]), "vertices": len(V),
            "alpha_ideal_rad_s2": alpha, "times": prediction.times.tolist(), "angle_learned": angles.tolist(),
            "angle_ideal": ideal.tolist(), "same_direction_at_0.1s": bool(np.sign(angles[early][-1]) == np.sign(alpha)),
            "angle_learned_at_end_deg": float(np.degrees(angles[-1])),
            "angle_ideal_at_end_deg": float(np.degrees(ideal[-1])),
            "lid_kabsch_rms_max_m": float(residuals.max()), "base_motion_max_m": float(base_motion),
            "lid_size_m": float(np.linalg.norm(np.ptp(V[lid], axis=0))), "seconds": seconds}


def door_check(model, path: Path, speed: float = 0.3, duration: float = 0.5) -> dict:
    inst = load_instance(path)
    joint = inst.joints[0]  # the door hinge (the frame is its fixed parent)
    V = np.asarray(inst.rest_vertices, dtype=np.float64)
    F = np.asarray(inst.faces, dtype=np.int64)
    door = np.isin(np.asarray(inst.part_ids), joint["child_parts"])
    axis = np.asarray(joint["axis"], dtype=np.float64)
    pivot = np.asarray(joint["pivot"], dtype=np.float64)
    r = V - pivot
    r_perp = r - np.outer(r @ axis, axis)
    height = r @ axis
    # the free edge at mid height: the door vertex farthest from the axis among the middle third
    middle = door & (np.abs(height - np.median(height[door])) <= np.ptp(height[door]) / 6)
    index = np.flatnonzero(middle)[np.argmax(np.linalg.norm(r_perp[middle], axis=1))]
    radius = float(np.linalg.norm(r_perp[index]))
    direction = np.cross(axis, r_perp[index]) / radius  # opening: positive rotation about the axis
    settings = settings_from(stiffness=0.0, damping=0.0, gravity=(0.0, 0.0, 0.0), duration=duration, fps=30.0)
    instance = encode_mesh(model, V, F)
    started = time.perf_counter()
    prediction = predict_motion(instance, ContactConditions([V[index]], [speed * direction]), settings)
    seconds = time.perf_counter() - started
    angles, residuals = part_motion(prediction.vertices.astype(np.float64), door, axis)
    ideal = speed / radius * prediction.times
    frame_motion = np.linalg.norm(prediction.vertices[:, ~door] - prediction.vertices[:1, ~door], axis=-1).max()
    return {"file": path.name, "vertices": len(V), "radius_m": radius, "speed_m_s": speed,
            "times": prediction.times.tolist(), "angle_learned": angles.tolist(), "angle_ideal": ideal.tolist(),
            "angle_error_rms_deg": float(np.degrees(np.sqrt(np.mean((angles - ideal) ** 2)))),
            "angle_learned_at_end_deg": float(np.degrees(angles[-1])),
            "angle_ideal_at_end_deg": float(np.degrees(ideal[-1])),
            "door_kabsch_rms_max_m": float(residuals.max()), "frame_motion_max_m": float(frame_motion),
            "contact_velocity_residual": prediction.summary["contact_velocity_residual"],
            "door_width_m": float(radius), "seconds": seconds}


def plot(lids: list[dict], doors: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for record in lids:
        line, = axes[0].plot(record["times"], np.degrees(record["angle_learned"]), label=f"{record['file']} learned")
        axes[0].plot(record["times"], np.degrees(record["angle_ideal"]), "--", color=line.get_color(), label="rigid ideal")
    axes[0].set(title="lid under gravity: rotation about the hinge", xlabel="time (s)", ylabel="angle (deg)")
    for record in doors:
        line, = axes[1].plot(record["times"], np.degrees(record["angle_learned"]), label=f"{record['file']} learned")
        axes[1].plot(record["times"], np.degrees(record["angle_ideal"]), "--", color=line.get_color(), label="v / r t")
    axes[1].set(title="door pushed at its edge: rotation about the hinge", xlabel="time (s)", ylabel="angle (deg)")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder (manifest.json with a test split)")
    parser.add_argument("--out", default="docs/physics/learned_checks.md")
    parser.add_argument("--count", type=int, default=3, help="laptops and doors from the test split")
    args = parser.parse_args()
    root = Path(args.data)
    test = json.loads((root / "manifest.json").read_text())["splits"]["test"]
    model, _ = load_default_model()
    lids = [lid_check(model, root / f) for f in sorted(f for f in test if f.startswith("laptop_"))[:args.count]]
    doors = [door_check(model, root / f) for f in sorted(f for f in test if f.startswith("door_"))[:args.count]]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure = out.with_suffix(".png")
    plot(lids, doors, figure)
    lines = ["# The learned model against rigid-body physics", "",
             f"Generated by `scripts/learned_physics_checks.py --data {args.data} --out {args.out}` "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}); see the script's docstring for the protocol.",
             "", f"![rotations]({figure.name})", "",
             "## Lid under gravity (free: no restoring, no damping; 0.3 s)", "",
             "| instance | lid angle (rad) | ideal alpha (rad/s²) | same direction at 0.1 s | learned at 0.3 s (deg) "
             "| rigid ideal at 0.3 s (deg) | lid Kabsch RMS max (mm) | base motion max (mm) |",
             "|---|---:|---:|---|---:|---:|---:|---:|"]
    for r in lids:
        lines.append(f"| {r['file']} | {r['joint_angle_rad']:.2f} | {r['alpha_ideal_rad_s2']:.1f} | "
                     f"{'yes' if r['same_direction_at_0.1s'] else 'no'} | {r['angle_learned_at_end_deg']:.2f} | "
                     f"{r['angle_ideal_at_end_deg']:.2f} | {r['lid_kabsch_rms_max_m'] * 1e3:.1f} | "
                     f"{r['base_motion_max_m'] * 1e3:.1f} |")
    lines += ["", "## Door pushed at its free edge (no gravity, no restoring, no damping; 0.5 s)", "",
              "| instance | r (m) | v (m/s) | learned at 0.5 s (deg) | v/r t at 0.5 s (deg) | angle error RMS (deg) "
              "| door Kabsch RMS max (mm) | frame motion max (mm) | contact velocity residual |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in doors:
        lines.append(f"| {r['file']} | {r['radius_m']:.3f} | {r['speed_m_s']:.2f} | {r['angle_learned_at_end_deg']:.2f} | "
                     f"{r['angle_ideal_at_end_deg']:.2f} | {r['angle_error_rms_deg']:.2f} | "
                     f"{r['door_kabsch_rms_max_m'] * 1e3:.1f} | {r['frame_motion_max_m'] * 1e3:.1f} | "
                     f"{r['contact_velocity_residual']:.4f} |")
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps({"lids": lids, "doors": doors}, indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
