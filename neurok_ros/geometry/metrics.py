"""Shape metrics comparable with the literature (Occupancy Networks' evaluation), docs/architecture.md §4.

Both shapes are first normalised with the SOURCE mesh's NormalisingTransform, so numbers are in
units of the source's longest bounding-box side.
- Chamfer-L1 = 0.5 * (mean NN distance pred->gt + mean NN distance gt->pred), Euclidean distances
  between area-uniform surface samples; Chamfer-L2 the same with squared distances. With N samples
  per shape on a surface of area A, even identical shapes score about 0.5 * sqrt(A / N) (the mean
  nearest-neighbour gap of two independent sample sets): this is sampling noise, not error.
- Volumetric IoU on uniform points in the padded box around both shapes, inside/outside by the
  generalised winding number (works for open and multi-part meshes; geometry/occupancy.py answers a
  closed mesh's points by surface-free octree cells, the same answers for a third of the time). It is
  undefined (NaN) when the reference shape encloses no volume, e.g. a flat sheet: there is nothing to
  compare with. That is decided on the reference alone (points in its own padded box, a seed of their
  own), so a pair is
  defined or undefined for every prediction alike.
A fixed default seed makes every number reproducible.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.occupancy import inside_mesh
from neurok_ros.geometry.surface_sampling import sample_surface

DEFAULT_SEED = 20260530
DEFAULT_NUM_SAMPLES = 100_000
VOLUME_CHECK_SEED = (DEFAULT_SEED, 1)  # the points that decide whether a reference encloses volume


def _rng(rng) -> np.random.Generator:
    if rng is None:
        return np.random.default_rng(DEFAULT_SEED)
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(int(rng))


def chamfer_distances(V_pred, F_pred, V_gt, F_gt, transform: NormalisingTransform,
                      num_samples: int = DEFAULT_NUM_SAMPLES, rng=None) -> tuple[float, float]:
    """(chamfer_l1, chamfer_l2) of two meshes, both normalised by `transform` (the source's).

    V_*: (n, 3) vertices in the source mesh's frame and units; F_*: (m, 3) faces.
    num_samples: area-uniform samples per shape. rng: Generator or seed (default: DEFAULT_SEED).
    Results are in normalised units (l1) and normalised units squared (l2).
    """
    from scipy.spatial import cKDTree

    generator = _rng(rng)
    V_pred, F_pred = validate_mesh_arrays(V_pred, F_pred)
    V_gt, F_gt = validate_mesh_arrays(V_gt, F_gt)
    pred = sample_surface(transform.apply(V_pred), F_pred, num_samples, generator).points
    gt = sample_surface(transform.apply(V_gt), F_gt, num_samples, generator).points
    pred_to_gt, _ = cKDTree(gt).query(pred, k=1, workers=-1)
    gt_to_pred, _ = cKDTree(pred).query(gt, k=1, workers=-1)
    chamfer_l1 = 0.5 * (pred_to_gt.mean() + gt_to_pred.mean())
    chamfer_l2 = 0.5 * ((pred_to_gt**2).mean() + (gt_to_pred**2).mean())
    return float(chamfer_l1), float(chamfer_l2)


def _padded_box(vertices: np.ndarray, padding: float) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) (3,) of the bounding box of (n, 3) vertices grown on every side by `padding` times
    its longest side."""
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    margin = float(padding) * float((high - low).max())
    return low - margin, high + margin


def _uniform_points(low, high, count: int, generator: np.random.Generator) -> np.ndarray:
    return low + generator.random((int(count), 3)) * (high - low)


def encloses_volume(vertices, faces, num_points: int = DEFAULT_NUM_SAMPLES, padding: float = 0.05) -> bool:
    """Whether a mesh ((n, 3) vertices, (m, 3) faces) encloses any of num_points uniform points of its
    own padded box (fixed seed VOLUME_CHECK_SEED): False for a flat sheet, whose IoU is undefined."""
    low, high = _padded_box(vertices, padding)
    points = _uniform_points(low, high, num_points, np.random.default_rng(VOLUME_CHECK_SEED))
    start, chunk = 0, 1024  # growing chunks: a solid answers within the first, a sheet tests them all
    while start < len(points):
        if inside_mesh(vertices, faces, points[start:start + chunk]).any():
            return True
        start, chunk = start + chunk, 4 * chunk
    return False


def union_box_points(V_a: np.ndarray, V_b: np.ndarray, num_points: int, rng=None,
                     padding: float = 0.05) -> np.ndarray:
    """(num_points, 3) uniform points in the bounding box of both vertex sets (n, 3), grown on every side
    by `padding` times its longest side: volumetric_iou's points. rng: Generator or seed."""
    low, high = _padded_box(np.concatenate([V_a, V_b]), padding)
    return _uniform_points(low, high, num_points, _rng(rng))


def volumetric_iou(V_a, F_a, V_b, F_b, transform: NormalisingTransform,
                   num_points: int = DEFAULT_NUM_SAMPLES,
                   rng=None, padding: float = 0.05) -> float:
    """Volumetric IoU of mesh B against the reference mesh A, both normalised by `transform` (the source's).

    num_points uniform points fill the union bounding box of both shapes, grown on every side by
    `padding` times its longest side. Returns |A and B| / |A or B| in [0, 1] (0 where neither shape
    holds any of these points: B covers none of A's volume); NaN when the reference A encloses no
    volume (`encloses_volume`, decided on A alone, e.g. a flat sheet), where a volume ratio is undefined.
    """
    generator = _rng(rng)
    V_a, F_a = validate_mesh_arrays(V_a, F_a)
    V_b, F_b = validate_mesh_arrays(V_b, F_b)
    V_a, V_b = transform.apply(V_a), transform.apply(V_b)
    if not encloses_volume(V_a, F_a, num_points, padding):
        return float("nan")
    points = union_box_points(V_a, V_b, num_points, generator, padding)
    inside_a = inside_mesh(V_a, F_a, points)
    inside_b = inside_mesh(V_b, F_b, points)
    union = np.count_nonzero(inside_a | inside_b)
    return float(np.count_nonzero(inside_a & inside_b) / union) if union else 0.0


def _as_arrays(mesh) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(mesh, (tuple, list)) and len(mesh) == 2:
        return validate_mesh_arrays(*mesh)
    from neurok_ros.geometry.mesh_io import load_mesh

    return load_mesh(mesh)


def mesh_metrics(source, target, num_samples: int = DEFAULT_NUM_SAMPLES,
                 seed: int = DEFAULT_SEED) -> dict:
    """Chamfer-L1, Chamfer-L2 and IoU of `target` against `source`, normalised by the source.

    source, target: a mesh file path or a (V (n, 3), F (m, 3)) pair, both in the same frame/units.
    num_samples: surface samples per shape for Chamfer and uniform points for IoU.
    Returns {"chamfer_l1": float, "chamfer_l2": float, "iou": float (NaN when source encloses no volume)}.
    """
    V_s, F_s = _as_arrays(source)
    V_t, F_t = _as_arrays(target)
    return metrics_in_frame((V_t, F_t), (V_s, F_s), NormalisingTransform.from_vertices(V_s), num_samples, seed)


def metrics_in_frame(prediction, reference, transform: NormalisingTransform,
                     num_samples: int = DEFAULT_NUM_SAMPLES, seed: int = DEFAULT_SEED) -> dict:
    """{"chamfer_l1", "chamfer_l2", "iou"} of a predicted mesh against a reference mesh, both given
    as (V (n, 3), F (m, 3)) in one frame and normalised by `transform` (e.g. a pose-fit's SOURCE)."""
    rng = np.random.default_rng(seed)
    chamfer_l1, chamfer_l2 = chamfer_distances(*prediction, *reference, transform, num_samples, rng)
    iou = volumetric_iou(*reference, *prediction, transform, num_samples, rng)
    return {"chamfer_l1": chamfer_l1, "chamfer_l2": chamfer_l2, "iou": iou}
