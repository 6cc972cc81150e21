"""Chamfer distances and volumetric IoU against analytic values on unit cubes.

Unit cube [0, 1]^3 (area 6) against the same cube shifted by d along x, 0 < d <= 1/2, distances
from a point of one surface to the other surface (by symmetry both directions agree):
- the face x = 0 (area 1) lies outside the other cube: distance d everywhere;
- the face x = 1 (area 1) lies inside it: distance min(d, m), m = distance to the face's border;
  P(m > s) = (1 - 2s)^2, so its integral is int_0^d (1 - 2s)^2 ds = d - 2d^2 + 4d^3/3;
- each of the 4 side faces lies on the other cube's side face except a strip of width d, where
  the distance is d - x: integral d^2 / 2 each.
Mean over the area 6: (2d + 4d^3/3) / 6, so Chamfer-L1 = d/3 + 2d^3/9 (Chamfer-L2 likewise).
Finite sampling adds about 0.5 * sqrt(A / N) where the true distance is 0 (see metrics.py), which is
why d is not tiny below.
"""
import numpy as np
import pytest
import trimesh

from neurok_ros.geometry.metrics import chamfer_distances, encloses_volume, mesh_metrics, volumetric_iou
from neurok_ros.geometry.normalisation import NormalisingTransform

pytestmark = pytest.mark.unit

CUBE = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
CUBE_V = np.asarray(CUBE.vertices) + 0.5  # [0, 1]^3
CUBE_F = np.asarray(CUBE.faces, dtype=np.int64)
UNIT = NormalisingTransform.from_vertices(CUBE_V)


def expected_chamfer_l1(d):
    return d / 3 + 2 * d**3 / 9


def expected_chamfer_l2(d):
    # squared distances: face x=0: d^2; face x=1: int_0^d 2s (1-2s)^2 ds; sides: 4 * d^3 / 3
    face_inside = d**2 - 8 * d**3 / 3 + 2 * d**4
    return (d**2 + face_inside + 4 * d**3 / 3) / 6


def test_normalising_transform_of_the_cube_is_trivial():
    np.testing.assert_allclose(UNIT.centre, [0.5, 0.5, 0.5])
    assert UNIT.scale == pytest.approx(1.0)


def test_chamfer_of_a_mesh_with_itself_is_sampling_noise():
    # Two independent 100k-sample sets of the same surface: the mean nearest-neighbour gap of a
    # planar Poisson process of density N / A is 0.5 * sqrt(A / N) (0.0039 for the unit cube).
    l1, l2 = chamfer_distances(CUBE_V, CUBE_F, CUBE_V, CUBE_F, UNIT, num_samples=100_000)
    noise = 0.5 * np.sqrt(6.0 / 100_000)
    assert l1 == pytest.approx(noise, rel=0.1)
    assert l2 < 1e-4
    coarse, _ = chamfer_distances(CUBE_V, CUBE_F, CUBE_V, CUBE_F, UNIT, num_samples=10_000)
    assert coarse == pytest.approx(0.5 * np.sqrt(6.0 / 10_000), rel=0.1)


@pytest.mark.parametrize("d", [0.25, 0.4])
def test_chamfer_of_shifted_cube_matches_analytic_value(d):
    shifted = CUBE_V + [d, 0.0, 0.0]
    l1, l2 = chamfer_distances(CUBE_V, CUBE_F, shifted, CUBE_F, UNIT, num_samples=100_000)
    assert l1 == pytest.approx(expected_chamfer_l1(d), rel=0.05)
    assert l2 == pytest.approx(expected_chamfer_l2(d), rel=0.05)


def test_chamfer_is_measured_in_the_source_frame():
    # Scaling both meshes by 10 and normalising by the scaled source gives the same numbers.
    d = 0.3
    big = NormalisingTransform.from_vertices(10 * CUBE_V)
    l1_big, _ = chamfer_distances(10 * CUBE_V, CUBE_F, 10 * (CUBE_V + [d, 0, 0]), CUBE_F, big,
                                  num_samples=50_000, rng=np.random.default_rng(3))
    l1, _ = chamfer_distances(CUBE_V, CUBE_F, CUBE_V + [d, 0, 0], CUBE_F, UNIT,
                              num_samples=50_000, rng=np.random.default_rng(3))
    assert l1_big == pytest.approx(l1, rel=1e-9)


def test_iou_of_cubes_shifted_by_half_a_side():
    # intersection 1/2, union 3/2
    iou = volumetric_iou(CUBE_V, CUBE_F, CUBE_V + [0.5, 0.0, 0.0], CUBE_F, UNIT)
    assert iou == pytest.approx(1.0 / 3.0, abs=0.02)
    assert volumetric_iou(CUBE_V, CUBE_F, CUBE_V, CUBE_F, UNIT) == pytest.approx(1.0)


def test_iou_tolerates_an_open_mesh():
    # Drop the +y face (2 triangles): the winding number still tells inside from outside.
    open_faces = CUBE_F[~np.isclose(CUBE.face_normals[:, 1], 1.0)]
    assert len(open_faces) == 10
    shifted = CUBE_V + [0.5, 0.0, 0.0]
    closed = volumetric_iou(CUBE_V, CUBE_F, shifted, CUBE_F, UNIT)
    opened = volumetric_iou(CUBE_V, CUBE_F, shifted, open_faces, UNIT)
    assert opened == pytest.approx(closed, abs=0.05)
    assert opened == pytest.approx(1.0 / 3.0, abs=0.05)


def test_iou_with_inward_faces_and_disjoint_shapes():
    flipped = CUBE_F[:, ::-1]
    assert volumetric_iou(CUBE_V, CUBE_F, CUBE_V, flipped, UNIT) == pytest.approx(1.0)
    assert volumetric_iou(CUBE_V, CUBE_F, CUBE_V + [3.0, 0, 0], CUBE_F, UNIT) == 0.0


def test_iou_is_undefined_against_a_reference_without_volume():
    # A flat square sheet (2 triangles) in the cube's bottom face encloses no volume: against it, IoU is
    # NaN whatever the prediction, the sheet itself included; a prediction without volume scores 0.
    sheet_v = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    sheet_f = np.array([[0, 1, 2], [0, 2, 3]])
    assert np.isnan(volumetric_iou(sheet_v, sheet_f, CUBE_V, CUBE_F, UNIT))
    assert np.isnan(volumetric_iou(sheet_v, sheet_f, sheet_v, sheet_f, UNIT))
    assert volumetric_iou(CUBE_V, CUBE_F, sheet_v, sheet_f, UNIT) == 0.0
    assert np.isnan(mesh_metrics((sheet_v, sheet_f), (CUBE_V, CUBE_F), num_samples=10_000)["iou"])


def test_whether_iou_is_defined_depends_on_the_reference_alone():
    # A slab 1 x 1 x 0.001 encloses volume: 0.8% of its own padded box. Against a cube 20 times larger
    # and far away, the points fill so large a box that none lands in the slab, yet the IoU is a
    # number (no overlap: 0), not undefined; against itself it is 1.
    slab_v = CUBE_V * [1.0, 1.0, 0.001]
    assert encloses_volume(slab_v, CUBE_F)
    far_big = CUBE_V * 20.0 + [40.0, 0.0, 0.0]
    assert volumetric_iou(slab_v, CUBE_F, far_big, CUBE_F, UNIT) == 0.0
    assert volumetric_iou(slab_v, CUBE_F, slab_v, CUBE_F, UNIT) == pytest.approx(1.0)
    assert volumetric_iou(slab_v, CUBE_F, slab_v + [0.5, 0.0, 0.0], CUBE_F, UNIT) == pytest.approx(1 / 3, abs=0.05)
    # a flat sheet stays undefined whatever the prediction's extent
    sheet_v = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    sheet_f = np.array([[0, 1, 2], [0, 2, 3]])
    assert not encloses_volume(sheet_v, sheet_f)
    for prediction in (sheet_v, sheet_v * 0.5, CUBE_V * [1.0, 1.0, 0.001], far_big):
        faces = sheet_f if len(prediction) == 4 else CUBE_F
        assert np.isnan(volumetric_iou(sheet_v, sheet_f, prediction, faces, UNIT))


def test_mesh_metrics_is_reproducible_and_normalises_by_the_source(tmp_path):
    from neurok_ros.geometry.mesh_io import save_mesh

    d = 0.4
    scale = 5.0
    source, target = tmp_path / "source.ply", tmp_path / "target.obj"
    save_mesh(source, scale * CUBE_V, CUBE_F)
    save_mesh(target, scale * (CUBE_V + [d, 0, 0]), CUBE_F)
    first = mesh_metrics(source, target, num_samples=50_000)
    assert set(first) == {"chamfer_l1", "chamfer_l2", "iou"}
    assert first == mesh_metrics((scale * CUBE_V, CUBE_F), (scale * (CUBE_V + [d, 0, 0]), CUBE_F),
                                 num_samples=50_000)
    assert first["chamfer_l1"] == pytest.approx(expected_chamfer_l1(d), rel=0.05)
    assert first["iou"] == pytest.approx((1 - d) / (1 + d), abs=0.02)
