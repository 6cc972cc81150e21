"""Piece registration: groups of rigid pieces moved rigidly onto an observation after a fit."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from neurok_ros.geometry.rigid_pieces import RigidPieces
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.kinematics.piece_registration import motion_groups, register_pieces, symmetric_icp

sys.path.insert(0, str(Path(__file__).parent))
from test_rigid_pieces import _box  # noqa: E402

pytestmark = pytest.mark.unit


def _turned_about_x(points, angle, pivot):
    c, s = np.cos(angle), np.sin(angle)
    R = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    return (points - pivot) @ R.T + pivot


def _lid_box():
    """A base, a thin plate lying on it and a lid: three pieces, lid hinged along x at y = 0.4, z = 0.1."""
    parts = [_box([0.0, 0.0, 0.0], [1.0, 0.8, 0.2]), _box([0.0, 0.0, 0.11], [0.6, 0.4, 0.02]),
             _box([0.0, 0.0, 0.15], [1.0, 0.8, 0.06])]
    V = np.concatenate([p[0] for p in parts])
    F = np.concatenate([p[1] + 8 * i for i, p in enumerate(parts)])
    return V, F


def test_symmetric_icp_recovers_a_small_rigid_motion_of_one_group_and_holds_the_other():
    V, F = _lid_box()
    samples = sample_surface(V, F, 4096, np.random.default_rng(1))
    groups = torch.as_tensor(np.where(samples.face_ids >= 24, 1, 0))     # the lid's faces come last
    points = torch.as_tensor(samples.points)
    true = samples.points.copy()
    lid = samples.face_ids >= 24
    true[lid] = _turned_about_x(true[lid], 0.08, np.array([0.0, 0.4, 0.1])) + [0.01, 0.0, 0.0]
    R, t = symmetric_icp(points, groups, 2, torch.as_tensor(true), 30)
    moved = (R[groups] @ points[:, :, None])[..., 0] + t[groups]
    error = np.linalg.norm(moved.numpy() - true, axis=1)
    assert error[lid].mean() < 0.005 and error[~lid].mean() < 0.002, (error[lid].mean(), error[~lid].mean())


def test_motion_groups_join_the_pieces_a_fit_moves_alike():
    V, F = _lid_box()
    pieces = RigidPieces.of_mesh(V, F)
    fitted = V.copy()
    fitted[16:] = _turned_about_x(V[16:], 0.2, np.array([0.0, 0.4, 0.1]))   # the lid opens, base and plate stay
    groups = motion_groups(torch.as_tensor(V), torch.as_tensor(fitted), torch.as_tensor(pieces.labels),
                           torch.as_tensor(pieces.areas), tolerance=0.01)
    assert groups[0] == groups[1] != groups[2]
    alike = motion_groups(torch.as_tensor(V), torch.as_tensor(V), torch.as_tensor(pieces.labels),
                          torch.as_tensor(pieces.areas), tolerance=0.01)
    assert (alike == 0).all()


def test_register_pieces_brings_a_lid_the_fit_left_short_onto_the_observation():
    V, F = _lid_box()
    pieces = RigidPieces.of_mesh(V, F)
    pivot = np.array([0.0, 0.4, 0.1])
    true = V.copy()
    true[16:] = _turned_about_x(V[16:], 0.35, pivot)
    fitted = V.copy()
    fitted[16:] = _turned_about_x(V[16:], 0.25, pivot)      # the fit's lid 0.1 rad short
    target = torch.as_tensor(sample_surface(true, F, 4096, np.random.default_rng(0)).points)
    samples = sample_surface(V, F, 4096, np.random.default_rng(10))
    registered = register_pieces(V, fitted, F, pieces, samples, target, steps=20, tolerance=0.01)
    before = np.linalg.norm(fitted - true, axis=1).mean()
    after = np.linalg.norm(registered - true, axis=1).mean()
    assert after < 0.3 * before, (before, after)
    np.testing.assert_allclose(registered[:16], V[:16], atol=0.01)   # base and plate stay where they were
    # each piece still has its rest shape: distances between its vertices are kept
    lid = registered[16:]
    np.testing.assert_allclose(np.linalg.norm(lid[:, None] - lid[None], axis=2),
                               np.linalg.norm(V[16:, None] - V[None, 16:], axis=2), atol=1e-9)
    assert np.array_equal(register_pieces(V, fitted, F, pieces, samples, target, steps=0, tolerance=0.01),
                          fitted)
    # judged on fresh samples: kept when it fits better, and a fit that is already exact stays as it is
    fresh = sample_surface(V, F, 4096, np.random.default_rng(99))
    judged = register_pieces(V, fitted, F, pieces, samples, target, steps=20, tolerance=0.01, fresh=fresh)
    np.testing.assert_array_equal(judged, registered)
    exact = register_pieces(V, true, F, pieces, samples, target, steps=20, tolerance=0.01, fresh=fresh)
    assert np.linalg.norm(exact - true, axis=1).mean() <= 0.002
