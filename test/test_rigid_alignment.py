"""rigid_alignment (neurok_ros/geometry/rigid_alignment.py): the Kabsch fit that puts a moved point
set back onto its rest positions, batched."""
import numpy as np
import pytest
import torch
from scipy.spatial.transform import Rotation

from neurok_ros.geometry.rigid_alignment import apply_rigid, fixes_a_frame, rigid_alignment

pytestmark = pytest.mark.unit


def test_a_rigid_motion_is_undone_exactly():
    rng = np.random.default_rng(3)
    rest = torch.as_tensor(rng.normal(size=(20, 3)))
    turns = torch.as_tensor(Rotation.random(4, random_state=5).as_matrix())
    shifts = torch.as_tensor(rng.normal(size=(4, 3)))
    moved = rest @ turns.transpose(1, 2) + shifts[:, None, :]
    rotation, translation = rigid_alignment(moved, rest)
    np.testing.assert_allclose(rotation, turns.transpose(1, 2), atol=1e-12)
    np.testing.assert_allclose(apply_rigid(rotation, translation, moved), rest.expand(4, -1, -1), atol=1e-12)


def test_the_fit_is_a_rotation_even_for_a_mirrored_set():
    rest = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=torch.float64)
    mirrored = rest * torch.tensor([1.0, 1.0, -1.0], dtype=torch.float64)
    rotation, _ = rigid_alignment(mirrored[None], rest)
    assert abs(float(torch.linalg.det(rotation[0])) - 1.0) < 1e-12
    np.testing.assert_allclose(rotation[0] @ rotation[0].T, torch.eye(3, dtype=torch.float64), atol=1e-12)


def test_points_on_one_line_do_not_fix_a_frame():
    line = torch.linspace(0.0, 1.0, 10, dtype=torch.float64)[:, None] * torch.tensor([[1.0, 2.0, 0.5]],
                                                                                   dtype=torch.float64)
    assert not fixes_a_frame(line)
    assert not fixes_a_frame(line[:2])
    plane = torch.cat([line, line + torch.tensor([0.0, 0.0, 0.3], dtype=torch.float64)])
    assert fixes_a_frame(plane)
