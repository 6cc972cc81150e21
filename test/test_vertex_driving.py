"""k-nearest-sample vertex driving with dual quaternions and displacements."""
import numpy as np
import pytest
import torch
import trimesh
from scipy.spatial.transform import Rotation

from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.geometry.vertex_driving import (
    blend_matrix,
    build_vertex_driver,
    drive_vertices_displacement,
    drive_vertices_dq,
    drive_vertices_dq_frames,
)

pytestmark = pytest.mark.unit


def _sphere_with_samples(count=400, seed=0):
    mesh = trimesh.creation.icosphere(subdivisions=3)
    V, F = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    samples = sample_surface(V, F, count, np.random.default_rng(seed))
    return V, samples.points


def test_driver_weights_are_normalised_inverse_distances():
    V, S = _sphere_with_samples()
    driver = build_vertex_driver(V, S, k=6)
    assert driver.indices.shape == (len(V), 6) and driver.weights.shape == (len(V), 6)
    np.testing.assert_allclose(driver.weights.sum(axis=1), 1.0, atol=1e-12)
    distances = np.linalg.norm(V[:, None, :] - S[driver.indices], axis=2)
    ratio = driver.weights * distances  # constant per row for 1 / d weights
    np.testing.assert_allclose(ratio, ratio[:, :1].repeat(6, axis=1), rtol=1e-9)
    # the indices are the true 6 nearest samples
    brute = np.argsort(np.linalg.norm(V[:, None, :] - S[None], axis=2), axis=1)[:, :6]
    np.testing.assert_array_equal(np.sort(driver.indices, axis=1), np.sort(brute, axis=1))


def test_vertex_on_a_sample_takes_it_alone():
    S = np.random.default_rng(1).random((50, 3))
    vertices = np.vstack([S[17], S[3] + 0.01])
    driver = build_vertex_driver(vertices, S, k=4)
    assert driver.indices[0, 0] == 17
    np.testing.assert_array_equal(driver.weights[0], [1.0, 0.0, 0.0, 0.0])
    displacement = np.zeros((50, 3))
    displacement[17] = [1.0, 2.0, 3.0]
    moved = drive_vertices_displacement(driver, vertices, displacement)
    np.testing.assert_allclose(moved[0], S[17] + [1.0, 2.0, 3.0])


def test_rigid_motion_of_all_samples_moves_vertices_rigidly():
    V, S = _sphere_with_samples()
    driver = build_vertex_driver(V, S, k=6)
    R = Rotation.from_rotvec([0.4, -1.1, 0.7]).as_matrix()
    t = np.array([0.3, -2.0, 1.5])
    sample_dqs = np.repeat(dq.from_rotation_translation(R, t)[None], len(S), axis=0)
    moved = drive_vertices_dq(driver, V, sample_dqs)
    np.testing.assert_allclose(moved, V @ R.T + t, atol=1e-6)
    # displacements of a rigid motion: exact for translations only, so test a pure translation
    moved = drive_vertices_displacement(driver, V, np.repeat(t[None], len(S), axis=0))
    np.testing.assert_allclose(moved, V + t, atol=1e-12)


def test_batched_frames_numpy_and_torch_agree_and_differentiate():
    V, S = _sphere_with_samples()
    driver = build_vertex_driver(V, S, k=5)
    rng = np.random.default_rng(4)
    R = Rotation.random(3 * len(S), random_state=8).as_matrix().reshape(3, len(S), 3, 3)
    t = rng.normal(size=(3, len(S), 3))
    sample_dqs = dq.from_rotation_translation(R, t)  # (T=3, s, 8)
    moved = drive_vertices_dq(driver, V, sample_dqs)
    assert moved.shape == (3, len(V), 3)
    dqs_t = torch.tensor(sample_dqs, requires_grad=True)
    moved_t = drive_vertices_dq(driver, V, dqs_t)
    np.testing.assert_allclose(moved_t.detach().numpy(), moved, atol=1e-10)
    moved_t.square().sum().backward()
    assert torch.isfinite(dqs_t.grad).all() and dqs_t.grad.abs().sum() > 0
    disp = rng.normal(size=(3, len(S), 3))
    np.testing.assert_allclose(
        drive_vertices_displacement(driver, V, torch.from_numpy(disp)).numpy(),
        drive_vertices_displacement(driver, V, disp), atol=1e-12)


def test_two_parts_with_different_transforms_stay_rigid():
    # Two boxes 3 units apart; each part's samples carry that part's rigid transform.
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0)).subdivide().subdivide()
    V_a = np.asarray(box.vertices)
    V_b = V_a + [3.0, 0.0, 0.0]
    F = np.asarray(box.faces)
    rng = np.random.default_rng(10)
    S_a = sample_surface(V_a, F, 300, rng).points
    S_b = sample_surface(V_b, F, 300, rng).points
    R_a, t_a = Rotation.from_rotvec([0.0, 0.0, 0.8]).as_matrix(), np.array([0.0, 1.0, 0.0])
    R_b, t_b = Rotation.from_rotvec([1.2, 0.3, 0.0]).as_matrix(), np.array([-1.0, 0.0, 2.0])
    sample_dqs = np.concatenate([
        np.repeat(dq.from_rotation_translation(R_a, t_a)[None], 300, axis=0),
        np.repeat(dq.from_rotation_translation(R_b, t_b)[None], 300, axis=0),
    ])
    vertices = np.vstack([V_a, V_b])
    driver = build_vertex_driver(vertices, np.vstack([S_a, S_b]), k=8)
    moved = drive_vertices_dq(driver, vertices, sample_dqs)
    n = len(V_a)
    np.testing.assert_allclose(moved[:n], V_a @ R_a.T + t_a, atol=1e-6)
    np.testing.assert_allclose(moved[n:], V_b @ R_b.T + t_b, atol=1e-6)
    # pairwise distances inside each part are preserved
    for part, original in ((moved[:n], V_a), (moved[n:], V_b)):
        d_before = np.linalg.norm(original[:, None] - original[None], axis=2)
        d_after = np.linalg.norm(part[:, None] - part[None], axis=2)
        np.testing.assert_allclose(d_after, d_before, atol=1e-6)


def test_blend_at_a_joint_interpolates_between_parts():
    # A vertex halfway between two samples with different rotations about the same pivot gets the
    # half-angle rotation (dual-quaternion blending, not a mean of positions).
    S = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    vertex = np.array([[0.0, 0.0, 1.0]])
    driver = build_vertex_driver(vertex, S, k=2)
    np.testing.assert_allclose(driver.weights, [[0.5, 0.5]])
    zero = np.zeros(3)
    dqs = np.stack([dq.from_rotation_translation(np.eye(3), zero),
                    dq.from_rotation_translation(Rotation.from_rotvec([np.pi / 2, 0, 0]).as_matrix(), zero)])
    moved = drive_vertices_dq(driver, vertex, dqs)
    expected = Rotation.from_rotvec([np.pi / 4, 0, 0]).apply(vertex)
    np.testing.assert_allclose(moved, expected, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(moved), 1.0, atol=1e-12)


def test_sparse_frames_blend_equals_the_gathering_blend_below_half_a_turn():
    """drive_vertices_dq_frames (one sparse product for all frames) against drive_vertices_dq, on
    smooth motions of random samples turned by up to 150 degrees, with random antipodal signs."""
    V, S = _sphere_with_samples()
    driver = build_vertex_driver(V, S, k=6)
    rng = np.random.default_rng(5)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angles = np.radians([0.0, 40.0, 150.0])[:, None, None] * (1.0 + 0.2 * np.tanh(S[None, :, :1]))
    R = Rotation.from_rotvec((angles * axis).reshape(-1, 3)).as_matrix().reshape(3, len(S), 3, 3)
    t = 0.1 * np.sin(S)[None] * np.arange(3)[:, None, None]
    sample_dqs = dq.from_rotation_translation(R, t) * rng.choice([-1.0, 1.0], size=(3, len(S), 1))
    expected = drive_vertices_dq(driver, V, sample_dqs)
    matrix = blend_matrix(driver, len(S), torch.zeros(1, dtype=torch.float64))
    got = drive_vertices_dq_frames(matrix, torch.as_tensor(V), torch.as_tensor(sample_dqs))
    assert got.shape == (3, len(V), 3)
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-9)
