"""Area-uniform surface sampling, re-evaluation on deformed meshes, field interpolation."""
import igl
import numpy as np
import pytest
import torch
import trimesh
from scipy.stats import chisquare

from neurok_ros.errors import MeshError
from neurok_ros.geometry.surface_sampling import (
    evaluate_samples,
    interpolate_vertex_field,
    sample_surface,
)

pytestmark = pytest.mark.unit

# Two triangles sharing an edge, areas 0.5 and 1.5 (ratio 1 : 3).
TWO_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [3, 1, 0]], dtype=np.float64)
TWO_F = np.array([[0, 1, 2], [1, 3, 2]], dtype=np.int64)


def test_faces_are_chosen_by_area():
    samples = sample_surface(TWO_V, TWO_F, 20_000, np.random.default_rng(1234))
    observed = np.bincount(samples.face_ids, minlength=2)
    expected = 20_000 * np.array([0.25, 0.75])
    assert chisquare(observed, expected).pvalue > 0.01
    # and a wrong hypothesis (uniform over faces) is rejected by the same test
    assert chisquare(observed, [10_000, 10_000]).pvalue < 1e-6


def test_points_are_uniform_inside_a_triangle():
    # The midpoint subdivision splits a triangle into 4 equal areas: the corner regions are where
    # one barycentric coordinate exceeds 1/2.
    samples = sample_surface(TWO_V[:3], TWO_F[:1], 20_000, np.random.default_rng(99))
    b = samples.barycentric
    region = np.where(b.max(axis=1) > 0.5, b.argmax(axis=1), 3)
    observed = np.bincount(region, minlength=4)
    assert chisquare(observed).pvalue > 0.01
    np.testing.assert_allclose(b.sum(axis=1), 1.0, atol=1e-12)
    assert (b >= 0).all()


def test_samples_lie_on_the_surface_and_are_deterministic():
    mesh = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3)
    V, F = np.asarray(mesh.vertices), np.asarray(mesh.faces, dtype=np.int64)
    samples = sample_surface(V, F, 5_000, np.random.default_rng(5))
    assert samples.points.shape == (5_000, 3) and samples.points.dtype == np.float64
    assert samples.face_ids.shape == (5_000,) and samples.barycentric.shape == (5_000, 3)
    squared, _, _ = igl.point_mesh_squared_distance(samples.points, V, F)
    assert np.sqrt(squared).max() < 1e-9
    again = sample_surface(V, F, 5_000, np.random.default_rng(5))
    np.testing.assert_array_equal(again.points, samples.points)
    other = sample_surface(V, F, 5_000, np.random.default_rng(6))
    assert not np.array_equal(other.points, samples.points)


def test_evaluate_samples_on_identity_and_rigid_deformations():
    mesh = trimesh.creation.icosphere(subdivisions=2)
    V, F = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    samples = sample_surface(V, F, 1_000, np.random.default_rng(0))
    np.testing.assert_allclose(evaluate_samples(V, F, samples.face_ids, samples.barycentric),
                               samples.points, atol=1e-12)
    # a (T, n, 3) trajectory: identity, then a rotation about z plus a shift
    angle = 0.7
    R = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0], [0, 0, 1]])
    frames = np.stack([V, V @ R.T + [1.0, 2.0, 3.0]])
    moved = evaluate_samples(frames, F, samples.face_ids, samples.barycentric)
    assert moved.shape == (2, 1_000, 3)
    np.testing.assert_allclose(moved[0], samples.points, atol=1e-12)
    np.testing.assert_allclose(moved[1], samples.points @ R.T + [1.0, 2.0, 3.0], atol=1e-12)
    moved_torch = evaluate_samples(torch.from_numpy(frames), F, samples.face_ids, samples.barycentric)
    np.testing.assert_allclose(moved_torch.numpy(), moved, atol=1e-12)


def test_interpolate_vertex_field_is_linear_on_faces():
    mesh = trimesh.creation.icosphere(subdivisions=1)
    V, F = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    samples = sample_surface(V, F, 500, np.random.default_rng(3))
    # an affine field of position is reproduced exactly at the samples
    field = np.stack([2 * V[:, 0] - V[:, 2] + 1, V[:, 1] * 3], axis=1)
    values = interpolate_vertex_field(field, F, samples.face_ids, samples.barycentric)
    expected = np.stack([2 * samples.points[:, 0] - samples.points[:, 2] + 1, samples.points[:, 1] * 3], 1)
    np.testing.assert_allclose(values, expected, atol=1e-12)


def test_zero_area_surface_cannot_be_sampled():
    flat = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], dtype=float)
    with pytest.raises(MeshError, match="zero area"):
        sample_surface(flat, [[0, 1, 2]], 10, np.random.default_rng(0))
