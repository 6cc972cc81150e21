"""Dual quaternions against rotation matrices on random rigid transforms."""
import numpy as np
import pytest
import torch
from scipy.spatial.transform import Rotation

from neurok_ros.geometry import dual_quaternion as dq

pytestmark = pytest.mark.unit

N = 200


@pytest.fixture
def rigid():
    rng = np.random.default_rng(7)
    R = Rotation.random(N, random_state=11).as_matrix()
    t = rng.normal(scale=2.0, size=(N, 3))
    points = rng.normal(size=(N, 3))
    return R, t, points


def test_apply_matches_rotation_matrix(rigid):
    R, t, points = rigid
    q = dq.from_rotation_translation(R, t)
    expected = np.einsum("nij,nj->ni", R, points) + t
    np.testing.assert_allclose(dq.apply(q, points), expected, atol=1e-10)


def test_unit_constraints(rigid):
    R, t, _ = rigid
    q = dq.from_rotation_translation(R, t)
    np.testing.assert_allclose(np.linalg.norm(q[:, :4], axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose((q[:, :4] * q[:, 4:]).sum(axis=1), 0.0, atol=1e-12)


def test_compose_is_matrix_product(rigid):
    R, t, points = rigid
    R2, t2 = R[::-1].copy(), t[::-1] * 0.5
    a, b = dq.from_rotation_translation(R, t), dq.from_rotation_translation(R2, t2)
    R_ab, t_ab = dq.to_rotation_translation(dq.compose(a, b))
    np.testing.assert_allclose(R_ab, R @ R2, atol=1e-10)
    np.testing.assert_allclose(t_ab, np.einsum("nij,nj->ni", R, t2) + t, atol=1e-10)
    np.testing.assert_allclose(dq.apply(dq.compose(a, b), points),
                               dq.apply(a, dq.apply(b, points)), atol=1e-10)


def test_inverse_undoes_transform(rigid):
    R, t, points = rigid
    q = dq.from_rotation_translation(R, t)
    np.testing.assert_allclose(dq.apply(dq.inverse(q), dq.apply(q, points)), points, atol=1e-10)
    R_inv, t_inv = dq.to_rotation_translation(dq.inverse(q))
    np.testing.assert_allclose(R_inv, np.transpose(R, (0, 2, 1)), atol=1e-10)
    np.testing.assert_allclose(t_inv, -np.einsum("nji,nj->ni", R, t), atol=1e-10)
    np.testing.assert_allclose(dq.compose(q, dq.inverse(q)), dq.identity((N,), like=q), atol=1e-12)


def test_rotation_translation_round_trip(rigid):
    R, t, _ = rigid
    R_back, t_back = dq.to_rotation_translation(dq.from_rotation_translation(R, t))
    np.testing.assert_allclose(R_back, R, atol=1e-10)
    np.testing.assert_allclose(t_back, t, atol=1e-10)


def test_round_trip_near_half_turn():
    R = Rotation.from_rotvec(np.array([[np.pi, 0, 0], [0, np.pi - 1e-9, 0], [1, 1, 1]])
                             / np.array([[1], [1], [np.sqrt(3) / np.pi]])).as_matrix()
    t = np.ones((3, 3))
    R_back, t_back = dq.to_rotation_translation(dq.from_rotation_translation(R, t))
    np.testing.assert_allclose(R_back, R, atol=1e-8)
    np.testing.assert_allclose(t_back, t, atol=1e-8)


def test_normalise_idempotent_and_projects(rigid):
    R, t, points = rigid
    q = dq.from_rotation_translation(R, t)
    rng = np.random.default_rng(3)
    noisy = q * 1.7 + rng.normal(scale=1e-6, size=q.shape)
    once = dq.normalise(noisy)
    np.testing.assert_allclose(dq.normalise(once), once, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(once[:, :4], axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose((once[:, :4] * once[:, 4:]).sum(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(dq.apply(once, points), dq.apply(q, points), atol=1e-4)


def test_blend_of_identical_transforms_returns_it(rigid):
    R, t, points = rigid
    q = dq.from_rotation_translation(R, t)
    stacked = np.stack([q, q, -q], axis=1)  # -q is the same transform
    weights = np.random.default_rng(5).random((N, 3)) + 0.1
    blended = dq.blend(stacked, weights)
    np.testing.assert_allclose(dq.apply(blended, points), dq.apply(q, points), atol=1e-10)


@pytest.mark.parametrize("angle", [0.3, 1.2, 2.5])
def test_blend_of_coaxial_rotations_gives_half_angle(angle):
    axis = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    zero = np.zeros(3)
    q_id = dq.from_rotation_translation(np.eye(3), zero)
    q_rot = dq.from_rotation_translation(Rotation.from_rotvec(angle * axis).as_matrix(), zero)
    R_half, t_half = dq.to_rotation_translation(dq.blend(np.stack([q_id, q_rot]), np.array([0.5, 0.5])))
    np.testing.assert_allclose(R_half, Rotation.from_rotvec(0.5 * angle * axis).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(t_half, zero, atol=1e-12)
    # two rotations a, b about one axis blend to (a + b) / 2
    q_a = dq.from_rotation_translation(Rotation.from_rotvec(-0.4 * axis).as_matrix(), zero)
    R_mid, _ = dq.to_rotation_translation(dq.blend(np.stack([q_a, q_rot]), np.array([2.0, 2.0])))
    np.testing.assert_allclose(R_mid, Rotation.from_rotvec(0.5 * (angle - 0.4) * axis).as_matrix(),
                               atol=1e-12)


def test_torch_and_numpy_agree(rigid):
    R, t, points = rigid
    q_np = dq.from_rotation_translation(R, t)
    q_t = dq.from_rotation_translation(torch.from_numpy(R), torch.from_numpy(t))
    np.testing.assert_allclose(q_t.numpy(), q_np, atol=1e-12)
    P = torch.from_numpy(points)
    np.testing.assert_allclose(dq.apply(q_t, P).numpy(), dq.apply(q_np, points), atol=1e-12)
    np.testing.assert_allclose(dq.compose(q_t, q_t.flip(0)).numpy(),
                               dq.compose(q_np, q_np[::-1]), atol=1e-12)
    weights = np.random.default_rng(1).random((N // 2, 2))
    pairs = q_np.reshape(N // 2, 2, 8)
    np.testing.assert_allclose(dq.blend(torch.from_numpy(pairs), torch.from_numpy(weights)).numpy(),
                               dq.blend(pairs, weights), atol=1e-12)
    R_t, t_t = dq.to_rotation_translation(q_t)
    np.testing.assert_allclose(R_t.numpy(), R, atol=1e-10)
    np.testing.assert_allclose(t_t.numpy(), t, atol=1e-10)


def test_torch_autograd_through_apply(rigid):
    R, t, points = rigid
    translation = torch.tensor(t[:4], requires_grad=True)
    q = dq.from_rotation_translation(torch.from_numpy(R[:4]), translation)
    out = dq.apply(q, torch.from_numpy(points[:4]))
    out.sum().backward()
    # d(sum(R p + t)) / dt = 1 for every component
    np.testing.assert_allclose(translation.grad.numpy(), np.ones((4, 3)), atol=1e-10)

    # gradient with respect to the dual quaternion itself, checked against finite differences
    q_leaf = q.detach().clone().requires_grad_(True)
    p = torch.from_numpy(points[:4])
    torch.autograd.gradcheck(lambda x: dq.apply(dq.normalise(x), p), (q_leaf,))
