"""Pose fitting in joint coordinates (kinematics/joint_pose_fit.py) on box objects with exact joints:
the joint values come back from surface samples of the posed object, from every side or one view."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from box_objects import cabinet_drawer, laptop, two_doors

from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.kinematics.joint_pose_fit import fit_joint_pose, observed_chamfer, part_transforms

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("one_torch_thread")]


def posed(vertices, articulation, q) -> np.ndarray:
    R, t = part_transforms(articulation, torch.as_tensor(np.asarray(q, dtype=np.float64))[None])
    return np.einsum("nij,nj->ni", R[0, articulation.labels].numpy(), vertices) + t[0, articulation.labels].numpy()


@pytest.mark.parametrize("maker, truth, tolerance", [
    (lambda: laptop(60.0), [-0.6], np.radians(1.0)),
    (two_doors, [1.2, 0.4], np.radians(2.0)),
    (cabinet_drawer, [0.12], 0.01 * 0.2),  # 1% of the drawer's 0.2 m range
])
def test_joint_values_come_back_from_samples_of_the_posed_object(maker, truth, tolerance):
    V, F, articulation, _ = maker()
    target = posed(V, articulation, truth)
    observed = sample_surface(target, F, 2048, np.random.default_rng(1)).points
    fit = fit_joint_pose(V, F, articulation, observed)
    assert np.abs(fit.q - truth).max() < tolerance
    assert fit.joint_values() == {j.name: pytest.approx(v) for j, v in zip(articulation.joints, fit.q)}
    assert np.abs(fit.vertices - posed(V, articulation, fit.q)).max() < 1e-9  # each part exactly rigid
    floor = observed_chamfer(target, F, observed)  # the true pose's: the samples' own spacing
    assert observed_chamfer(fit.vertices, F, observed) < 1.1 * floor < observed_chamfer(V, F, observed)


def test_the_fit_stays_within_the_limits_and_never_loses_to_rest():
    V, F, articulation, _ = laptop(60.0)
    joint = articulation.joints[0]
    beyond = posed(V, articulation, [joint.upper + 0.5])  # a pose past the limit
    observed = sample_surface(beyond, F, 2048, np.random.default_rng(2)).points
    fit = fit_joint_pose(V, F, articulation, observed)
    assert joint.lower - 1e-9 <= fit.q[0] <= joint.upper + 1e-9
    at_rest = sample_surface(V, F, 2048, np.random.default_rng(3)).points
    still = fit_joint_pose(V, F, articulation, at_rest)
    assert abs(still.q[0]) < np.radians(1.0)


def test_one_view_fits_the_seen_side():
    V, F, articulation, _ = laptop(60.0)
    target = posed(V, articulation, [-0.5])
    observed = sample_surface(target, F, 4096, np.random.default_rng(4)).points
    seen = observed[observed[:, 1] > np.median(observed[:, 1])]  # half the object, as one view sees it
    fit = fit_joint_pose(V, F, articulation, seen, partial=True)
    assert abs(fit.q[0] + 0.5) < np.radians(3.0)
