"""The pose a scan shows: fit an encoded mesh's learned space to scanned points, report the fit.

A scan (M, 3) observes the object now, in the mesh's frame and units (z up); it may show one side
only (`partial`: one depth camera). `fit_scan` first leaves out the points of the surface the object
stands on (`drop_support`), then fits a seeded subset of the rest with `fit_pose` (Chamfer on points,
no correspondence), decodes the fitted shape in the mesh's vertex order, and measures how far the
object's points lie from the fitted surface and from the mesh as given.

Why the support band: a depth camera cropped to the object still sees the table around it, and the
fit moves the object to cover those points. The example laptop seen from one camera with a 6 cm ring
of table (28 % of the points): its base vertices moved 51 mm (median) without the band, against 2
mm for the scan without table (docs/model.md).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from neurok_ros.errors import NeurokInputError
from neurok_ros.kinematics.ik_config import IKConfig

OVERLAP_MARGIN = 0.5  # scan points within this many bounding-box diagonals of the mesh's box overlap it
SUPPORT_BAND = 0.01  # scan points this close (in bounding-box diagonals) to the mesh's lowest z: the table
TRIM = 0.0  # fraction of the object's scan points farthest from the fitted shape left out of the fit


@dataclass
class ScanFit:
    """vertices (N, 3) float64: the fitted shape, mesh frame, units and vertex order; q (k_q,) and z
    (k,): its coordinates; moved: False when the mesh as given explains the scan (rest check, q = 0);
    full_space: the fit left the active subspace; residual / rest_residual: (median, 90th percentile)
    of the object's scan points' distances to the fitted surface / to the mesh as given, mesh units;
    support_points: scan points left out as the support surface; seconds: the fit."""

    vertices: np.ndarray
    q: np.ndarray
    z: np.ndarray
    moved: bool
    full_space: bool
    residual: tuple[float, float]
    rest_residual: tuple[float, float]
    support_points: int
    seconds: float


def check_overlap(scan: np.ndarray, vertices: np.ndarray, name: str = "scan") -> None:
    """Raise NeurokInputError unless at least half the scan's points (M, 3) lie within
    OVERLAP_MARGIN bounding-box diagonals of the mesh's box: a scan in another frame or unit, or one
    of the whole scene, would otherwise give a meaningless fit."""
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    margin = OVERLAP_MARGIN * float(np.linalg.norm(high - low))
    near = float(np.all((scan >= low - margin) & (scan <= high + margin), axis=1).mean())
    if near < 0.5:
        raise NeurokInputError(
            f"{name}: only {100 * near:.0f}% of the scan's points lie within {OVERLAP_MARGIN:g} bounding-box "
            f"diagonals of the mesh; the scan must be of the object alone (cropped), in the mesh's frame and units")


def drop_support(scan: np.ndarray, vertices: np.ndarray, band: float) -> np.ndarray:
    """The scan points (M, 3) that are not on the surface the object stands on: those more than
    `band` (mesh units) above or below the plane z = the mesh's lowest z. A part hanging below that
    plane (a towel over a table's edge) stays. band <= 0 keeps every point."""
    if band <= 0:
        return scan
    return scan[np.abs(scan[:, 2] - float(vertices[:, 2].min())) > band]


def scan_distances(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(M,) distances of points (M, 3) from the surface, mesh units."""
    from neurok_ros.geometry.occupancy import surface_distance

    return surface_distance(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64), points)


def surface_distances(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> tuple[float, float]:
    """(median, 90th percentile) of the distances from points (M, 3) to the surface, mesh units."""
    return distance_summary(scan_distances(points, vertices, faces))


def distance_summary(distances: np.ndarray) -> tuple[float, float]:
    """(median, 90th percentile) of distances (M,)."""
    return float(np.median(distances)), float(np.percentile(distances, 90))


def fit_scan(instance, vertices: np.ndarray, faces: np.ndarray, scan: np.ndarray, partial: bool,
             points: int = 2048, seed: int = 0, support_band: float = SUPPORT_BAND, trim: float = TRIM,
             rigid_pieces: bool = True, ik: IKConfig = IKConfig()) -> ScanFit:
    """Fit `instance` (encoded from vertices (N, 3), faces (F, 3)) to scan (M, 3), mesh frame, z up;
    the fit sees at most `points` of the scan's object points (a seeded subset), after drop_support
    with a band of support_band bounding-box diagonals (0: none), and leaves the `trim` fraction of
    them farthest from the decoded shape out of its objective (IKConfig.trim); a mesh of several
    connected pieces is fitted as rigid pieces unless rigid_pieces is False (IKConfig.rigid_pieces); ik: the
    fit's other settings (seed, partial, trim and rigid_pieces are the arguments'). Raises
    NeurokInputError for a scan that does not overlap the mesh (check_overlap) or has fewer than
    MIN_POINTS object points."""
    import torch

    from neurok_ros.geometry.point_cloud_io import MIN_POINTS
    from neurok_ros.kinematics.inverse_kinematics import fit_pose

    scan = np.asarray(scan, dtype=np.float64)
    check_overlap(scan, vertices)
    diagonal = float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))
    everything, scan = scan, drop_support(scan, vertices, support_band * diagonal)
    if len(scan) < MIN_POINTS:
        raise NeurokInputError(f"scan: {len(scan)} of its {len(everything)} points are off the support surface "
                               f"(within {support_band:g} diagonals of the mesh's lowest z); at least {MIN_POINTS} "
                               f"are needed")
    rng = np.random.default_rng(seed)
    seen = scan if len(scan) <= points else scan[rng.choice(len(scan), points, replace=False)]
    result = fit_pose(instance, torch.as_tensor(instance.transform.apply(seen), dtype=torch.float32),
                      replace(ik, seed=seed, partial=partial, trim=trim, rigid_pieces=rigid_pieces))
    fitted = result.vertices
    return ScanFit(fitted, result.q.detach().cpu().numpy(), result.z.detach().cpu().numpy(), not result.kept_rest,
                   result.full_space, surface_distances(scan, fitted, faces), surface_distances(scan, vertices, faces),
                   len(everything) - len(scan), result.seconds)


@dataclass
class JointsFirstFit:
    """fit: the ScanFit kept; joints: the joint-space fit (kinematics.joint_pose_fit.JointPoseFit),
    None without joints; kept: of the mesh as given ("rest"), the joint pose alone ("joints") and
    the learned fit started from it ("learned"), the one nearest the scan (mean squared distance of
    its object points, the fit's objective; a median sees only the part most points lie on)."""

    fit: ScanFit
    joints: object
    kept: str


def fit_scan_through_joints(encode, vertices: np.ndarray, faces: np.ndarray, scan: np.ndarray, articulation,
                            partial: bool, points: int = 2048, seed: int = 0, support_band: float = SUPPORT_BAND,
                            trim: float = TRIM, rigid_pieces: bool = True, ik: IKConfig = IKConfig(),
                            instance=None) -> JointsFirstFit:
    """fit_scan, with an articulation's joint values fitted first when it has joints: each part moved
    rigidly onto the scan's object points (fit_joint_pose), the learned fit started from that pose
    (`encode(posed_vertices)` -> its instance), and of the mesh as given, the joint pose and the
    learned fit the one nearest the scan kept. Articulation None
    or jointless: fit_scan on `instance`, the encoding of `vertices` if given, else encode(vertices)."""
    if articulation is None or not articulation.joints:
        instance = encode(vertices) if instance is None else instance
        return JointsFirstFit(fit_scan(instance, vertices, faces, scan, partial, points, seed, support_band, trim,
                                       rigid_pieces, ik), None, "learned")
    from neurok_ros.kinematics.joint_pose_fit import fit_joint_pose
    from neurok_ros.kinematics.joints_first_ik import nearest_pose

    scan = np.asarray(scan, dtype=np.float64)
    check_overlap(scan, vertices)
    on_object = drop_support(scan, vertices, support_band * float(np.linalg.norm(np.ptp(vertices, axis=0))))
    seen = on_object[np.random.default_rng(seed).permutation(len(on_object))[:points]]
    joints = fit_joint_pose(vertices, faces, articulation, seen, partial, seed=seed, hold_limits=ik.hold_joint_limits)
    start = encode(joints.vertices)
    fit = fit_scan(start, joints.vertices, faces, scan, partial, points, seed, support_band, trim, rigid_pieces, ik)
    poses = {"rest": np.asarray(vertices, dtype=np.float64), "joints": joints.vertices, "learned": fit.vertices}
    distances = {name: scan_distances(on_object, pose, faces) for name, pose in poses.items()}
    kept = nearest_pose({name: float(np.square(d).mean()) for name, d in distances.items()})
    residuals = {name: distance_summary(d) for name, d in distances.items()}
    if kept != "learned":  # no learned motion: q = 0, z the joint pose's own
        fit = replace(fit, vertices=poses[kept], residual=residuals[kept], q=np.zeros_like(fit.q),
                      z=start.rest_latent.detach().cpu().numpy().astype(fit.z.dtype))
    moved = kept == "joints" and bool(np.abs(joints.q).max(initial=0.0) > 0) or kept == "learned" and fit.moved
    fit = replace(fit, rest_residual=residuals["rest"], moved=moved)
    return JointsFirstFit(fit, joints, kept)
