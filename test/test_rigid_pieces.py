"""Rigid pieces of a multi-piece mesh: labels, each piece's best rigid motion, the projection on it
and the rigidity residual's gradient."""
import numpy as np
import pytest
import torch

from neurok_ros.geometry.dual_quaternion import quaternion_to_matrix
from neurok_ros.geometry.rigid_pieces import (
    RigidPieces,
    rigid_projection,
    rigidity_residual,
    vertex_areas,
    vertex_pieces,
)

pytestmark = pytest.mark.unit


def _box(centre, size):
    """A closed box (8 vertices, 12 faces) around centre with side lengths size."""
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return corners * np.asarray(size) + np.asarray(centre), faces


def _assembly():
    """Two boxes (a base and a lid) as one mesh of two pieces, plus a vertex no face uses."""
    Va, Fa = _box([0.0, 0.0, 0.0], [1.0, 0.8, 0.2])
    Vb, Fb = _box([0.0, 0.0, 0.3], [1.0, 0.8, 0.05])
    V = np.concatenate([Va, Vb, [[5.0, 5.0, 5.0]]])
    return V, np.concatenate([Fa, Fb + len(Va)])


def _rotation(seed):
    q = np.random.default_rng(seed).normal(size=4)
    return quaternion_to_matrix(q / np.linalg.norm(q))


def test_vertex_pieces_labels_each_connected_piece_and_none_of_a_single_piece_mesh():
    V, F = _assembly()
    labels = vertex_pieces(F, len(V))
    assert list(labels) == [0] * 8 + [1] * 8 + [-1]
    box, faces = _box([0, 0, 0], [1, 1, 1])
    assert (vertex_pieces(faces, len(box)) == -1).all()  # one piece: nothing to hold rigid
    assert RigidPieces.of_mesh(box, faces) is None
    areas = vertex_areas(box, faces)
    assert np.isclose(areas.sum(), 6.0) and (areas > 0).all()  # a third of each face to each corner


def test_rigid_projection_keeps_rigid_motions_and_makes_a_bent_piece_rigid():
    V, F = _assembly()
    labels = torch.as_tensor(vertex_pieces(F, len(V)))
    rest = torch.as_tensor(V)
    R0, R1 = _rotation(1), _rotation(2)
    moved = V.copy()
    moved[:8] = V[:8] @ R0.T + [0.1, -0.2, 0.3]
    moved[8:16] = V[8:16] @ R1.T + [0.0, 0.5, -0.1]
    moved[16] = [1.0, 2.0, 3.0]  # in no piece: left where it is
    exact = rigid_projection(rest, torch.as_tensor(moved)[None], labels)[0].numpy()
    np.testing.assert_allclose(exact, moved, atol=1e-9)
    assert float(rigidity_residual(rest, torch.as_tensor(moved)[None], labels)[0]) < 1e-18

    bent = moved.copy()
    bent[8:16] += np.random.default_rng(3).normal(scale=0.02, size=(8, 3))  # the lid bends
    projected = rigid_projection(rest, torch.as_tensor(bent)[None], labels)[0].numpy()
    np.testing.assert_allclose(projected[:8], moved[:8], atol=1e-9)  # the base was rigid: unchanged
    lid_rest = np.linalg.norm(V[8:16, None] - V[None, 8:16], axis=2)
    lid_now = np.linalg.norm(projected[8:16, None] - projected[None, 8:16], axis=2)
    np.testing.assert_allclose(lid_now, lid_rest, atol=1e-9)  # the lid is rigid again
    # ... and it is the least-squares rigid motion: a nearby rigid motion is farther from the bent lid
    error = np.square(projected[8:16] - bent[8:16]).sum()
    for seed in range(5):
        small = _rotation(10 + seed)
        angle = np.arccos(np.clip((np.trace(small) - 1) / 2, -1, 1))
        nudge = np.eye(3) + 0.01 / max(angle, 1e-9) * (small - np.eye(3))
        U, _, Vt = np.linalg.svd(nudge)
        other = (projected[8:16] - projected[8:16].mean(0)) @ (U @ Vt).T + projected[8:16].mean(0)
        assert np.square(other - bent[8:16]).sum() > error
    assert np.square(projected[16] - bent[16]).sum() == 0.0
    pieces = RigidPieces.of_mesh(V, F)
    np.testing.assert_allclose(pieces.project(V, bent), rigid_projection(
        rest, torch.as_tensor(bent)[None], labels, torch.as_tensor(pieces.areas))[0].numpy())


def test_rigidity_residual_gradient_is_the_residuals_derivative():
    """The best motions are held fixed in the gradient (they are the residual's minimisers): it must
    match central differences of the residual itself."""
    V, F = _assembly()
    labels = torch.as_tensor(vertex_pieces(F, len(V)))
    rest = torch.as_tensor(V)
    generator = torch.Generator().manual_seed(0)
    moved = (rest + 0.05 * torch.randn(rest.shape, generator=generator, dtype=torch.float64))[None]
    moved.requires_grad_(True)
    gradient = torch.autograd.grad(rigidity_residual(rest, moved, labels).sum(), moved)[0][0]
    numeric = torch.zeros_like(gradient)
    h = 1e-6
    for i in range(len(V)):
        for c in range(3):
            step = torch.zeros_like(moved)
            step[0, i, c] = h
            with torch.no_grad():
                numeric[i, c] = (rigidity_residual(rest, moved + step, labels)
                                 - rigidity_residual(rest, moved - step, labels))[0] / (2 * h)
    torch.testing.assert_close(gradient, numeric, atol=1e-7, rtol=1e-4)
    assert float(gradient[16].abs().max()) == 0.0  # the unused vertex is in no piece


def test_sample_labels_leave_out_pieces_with_too_few_samples():
    V, F = _assembly()
    pieces = RigidPieces.of_mesh(V, F)
    face_ids = np.array([0, 1, 2, 3, 12, 13, 14])  # four samples on the base, three on the lid
    assert pieces.sample_labels(F, face_ids).tolist() == [0, 0, 0, 0, -1, -1, -1]
    assert pieces.sample_labels(F, face_ids, least=3).tolist() == [0, 0, 0, 0, 1, 1, 1]
