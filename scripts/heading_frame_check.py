"""Could a model read meshes in a canonical heading instead of learning every heading? Measured here.

The lead (docs/model.md): at matched budgets the augmented dual-quaternion model fits worse than the
one trained without augmentation, as if learning every heading cost it capacity. A model could
instead turn each mesh to a heading computed from its geometry. This script computes such a heading
and measures whether it is stable enough to be a model's frame, on every other val instance:

  m = area-weighted centroid of the surface; C (2, 2) = second moments of the horizontal offsets;
  u = the major axis of C, v = u turned +90 degrees about up; s_u, s_v = their normalised third
  moments; the axis with the larger |s| is made to have s > 0 (a half turn flips both signs).
  Exact moments of a linear function y over a triangle of area A with corner values y1, y2, y3:
  int y^2 dA = A / 6 h2(y1, y2, y3), int y^3 dA = A / 10 h3(y1, y2, y3) (h_n: the complete
  homogeneous symmetric polynomial of degree n).

Per category: the spread of the heading over an instance's poses (every 4th; the angle an M0 in a
pose would be turned by, relative to the rest pose's), and the error of the frame under a random
turn of the rest mesh (0 when the heading turns with the mesh). Writes a markdown table.

    .venv/bin/python scripts/heading_frame_check.py --data DATASET_DIR --out docs/model/heading_frame_check.md
"""
from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

import numpy as np

from neurok_ros.errors import MeshError
from neurok_ros.training.instance_cache import InstanceCache
from neurok_ros.training.similarity import axis_angle_matrix, random_rotation


def _complete_homogeneous(y: np.ndarray, degree: int) -> np.ndarray:
    """h_degree of the three corner values y (m, 3) -> (m,), degree 2 or 3."""
    a, b, c = y[:, 0], y[:, 1], y[:, 2]
    if degree == 2:
        return a * a + b * b + c * c + a * b + b * c + c * a
    return (a ** 3 + b ** 3 + c ** 3 + a * a * (b + c) + b * b * (a + c) + c * c * (a + b) + a * b * c)


def horizontal_axes(up_axis: int) -> np.ndarray:
    """(2, 3) the two horizontal unit axes, (up + 1) % 3 then (up + 2) % 3 (right-handed with up)."""
    return np.eye(3)[[(up_axis + 1) % 3, (up_axis + 2) % 3]]


def heading_angle(vertices, faces, up_axis: int = 2) -> float:
    """Canonical heading (radians) of a mesh: vertices (n, 3) any units, faces (m, 3) int; the angle
    of its major horizontal axis u (sign fixed by the skew, module docstring) from the first
    horizontal axis. MeshError when the surface has no area."""
    V = np.asarray(vertices, np.float64)
    tri = V[np.asarray(faces, np.int64)]  # (m, 3 corners, 3)
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    total = area.sum()
    if not total > 0 or not np.isfinite(total):
        raise MeshError("cannot find the heading of a mesh without surface area")
    centroid = (area[:, None] * tri.mean(axis=1)).sum(axis=0) / total
    d = (tri - centroid) @ horizontal_axes(up_axis).T  # (m, 3, 2) horizontal offsets of the corners

    def moment(direction: np.ndarray, degree: int) -> float:
        y = d @ direction
        return float((area * _complete_homogeneous(y, degree)).sum() / total / (6.0 if degree == 2 else 10.0))

    e0, e1 = np.eye(2)
    c00, c11 = moment(e0, 2), moment(e1, 2)
    c01 = 0.5 * (moment(e0 + e1, 2) - c00 - c11)  # E[(a + b)^2] = E[a^2] + E[b^2] + 2 E[ab]
    theta = 0.5 * np.arctan2(2.0 * c01, c00 - c11)
    u = np.array([np.cos(theta), np.sin(theta)])
    v = np.array([-u[1], u[0]])
    skews = [moment(axis, 3) / max(moment(axis, 2), 1e-300) ** 1.5 for axis in (u, v)]
    decisive = skews[int(abs(skews[1]) > abs(skews[0]))]
    return float(theta + np.pi) if decisive < 0 else float(theta)


def heading_rotation(vertices, faces, up_axis: int = 2) -> np.ndarray:
    """(3, 3) rotation about the up axis that turns the mesh to its canonical heading: applied to
    vertices (p -> R p) it puts the major axis u on the first horizontal axis."""
    return axis_angle_matrix(np.eye(3)[up_axis], -heading_angle(vertices, faces, up_axis))


def _circular_gap(a: float, b: float) -> float:
    """|a - b| on the circle, degrees, for angles in radians."""
    return float(np.degrees(abs((a - b + np.pi) % (2 * np.pi) - np.pi)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset folder")
    parser.add_argument("--split", default="val")
    parser.add_argument("--out", default="docs/model/heading_frame_check.md")
    args = parser.parse_args()
    files = json.loads((Path(args.data) / "manifest.json").read_text())["splits"][args.split][::2]
    cache, rng = InstanceCache(512), np.random.default_rng(0)
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for name in files:
        poses = cache.get(Path(args.data) / name)
        row = rows[name.rsplit("_", 1)[0]]
        angles = [heading_angle(poses.positions[i], poses.faces) for i in range(0, poses.num_poses, 4)]
        row["spread"].append(max(_circular_gap(a, angles[0]) for a in angles))
        row["rest"].append(round(float(np.degrees(angles[0]))) % 360)
        turn = random_rotation(rng, "upright", 2, 0.0)
        rest = poses.positions[0].astype(np.float64)
        residual = heading_rotation(rest @ turn.T, poses.faces) @ turn @ heading_rotation(rest, poses.faces).T
        row["turn"].append(float(np.degrees(np.arccos(np.clip((np.trace(residual) - 1) / 2, -1, 1)))))
    lines = [f"# A canonical heading from the geometry: how stable? ({args.split} split, every other instance)", "",
             "Command: `.venv/bin/python scripts/heading_frame_check.py --data DATASET_DIR`; the rule is in the "
             "script's docstring.", "",
             "| category | instances | spread over poses, median / max (deg) | poses flipped >= 90 deg | "
             "error under a turn, max (deg) | rest headings (deg) |", "|---|---:|---:|---:|---:|---|"]
    for category, row in sorted(rows.items()):
        flipped = np.mean(np.asarray(row["spread"]) >= 90.0)
        headings = ", ".join(str(h) for h in sorted(row["rest"]))
        lines.append(f"| {category} | {len(row['rest'])} | {np.median(row['spread']):.1f} / {np.max(row['spread']):.1f} "
                     f"| {100 * flipped:.0f}% | {np.max(row['turn']):.1f} | {headings} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
