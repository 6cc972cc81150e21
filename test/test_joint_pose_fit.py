"""Pose fitting in joint coordinates (kinematics/joint_pose_fit.py) on box objects with exact joints:
the joint values come back from surface samples of the posed object, from every side or one view."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import trimesh
from box_objects import assemble, box, cabinet_drawer, chain, laptop, two_doors

from neurok_ros.articulation.articulation import Joint
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


def test_a_pose_past_the_limits_is_found_unless_they_are_held_and_rest_stays_at_rest():
    V, F, articulation, _ = laptop(60.0)
    joint = articulation.joints[0]
    past = joint.upper + 0.5  # a readout's limits can be tighter than the object's
    observed = sample_surface(posed(V, articulation, [past]), F, 2048, np.random.default_rng(2)).points
    assert abs(fit_joint_pose(V, F, articulation, observed).q[0] - past) < np.radians(1.0)
    held = fit_joint_pose(V, F, articulation, observed, hold_limits=True)
    assert joint.lower - 1e-9 <= held.q[0] <= joint.upper + 1e-9
    at_rest = sample_surface(V, F, 2048, np.random.default_rng(3)).points
    still = fit_joint_pose(V, F, articulation, at_rest)
    assert abs(still.q[0]) < np.radians(1.0)


def test_the_grid_start_finds_a_small_knob_turned_far_and_a_chain_folded_back():
    """Without random starts (starts=2: q = 0 and the grid start): a descent from q = 0 leaves a
    small part's large turn where it starts, as its share of the Chamfer is small."""
    base, knob = box([-0.15, -0.15, 0.0], [0.15, 0.15, 0.02]), box([-0.025, -0.025, 0.02], [0.025, 0.025, 0.05])
    pointer = box([0.025, -0.006, 0.03], [0.07, 0.006, 0.04])
    dial = assemble([base, trimesh.util.concatenate([knob, pointer])],
                    [Joint("knob", "revolute", [0, 0, 1], [0, 0, 0.02], -0.1, 0.1, 0, 1, 1.0)])
    for truth, (V, F, articulation) in [([2.5], dial), ([1.0, -2.6], chain()[:3])]:
        observed = sample_surface(posed(V, articulation, truth), F, 2048, np.random.default_rng(5)).points
        fit = fit_joint_pose(V, F, articulation, observed, starts=2)
        assert np.abs(fit.q - truth).max() < np.radians(2.0), (truth, fit.q)


def test_one_view_fits_the_seen_side():
    V, F, articulation, _ = laptop(60.0)
    target = posed(V, articulation, [-0.5])
    observed = sample_surface(target, F, 4096, np.random.default_rng(4)).points
    seen = observed[observed[:, 1] > np.median(observed[:, 1])]  # half the object, as one view sees it
    fit = fit_joint_pose(V, F, articulation, seen, partial=True)
    assert abs(fit.q[0] + 0.5) < np.radians(3.0)


def test_a_hinge_line_read_beside_the_true_one_is_refined_with_the_value():
    from dataclasses import replace

    from neurok_ros.articulation.evaluation import line_distance

    V, F, articulation, facts = laptop(60.0)
    observed = sample_surface(posed(V, articulation, [-0.8]), F, 2048, np.random.default_rng(1)).points
    tilted = np.array([1.0, 0.0, np.tan(np.radians(4.0))])
    off = replace(articulation, joints=[replace(articulation.joints[0], axis=tilted / np.linalg.norm(tilted),
                                                origin=articulation.joints[0].origin + [0.0, 0.02, 0.0])])
    fit = fit_joint_pose(V, F, off, observed)
    line = fit.articulation.joints[0]
    assert abs(fit.q[0] + 0.8) < np.radians(0.3)  # 0.9 degrees off without the refinement
    assert line_distance(facts["hinge"], line.origin, line.axis) < 0.01  # from 0.02 m
    assert fit_joint_pose(V, F, off, observed, refine=False).articulation.joints[0].origin == pytest.approx(
        off.joints[0].origin)


def test_a_knob_hinged_beside_itself_turns_about_its_own_centre():
    """A stove's dial with a grip bar across it, its line read 5 cm off its middle: turned 1 rad, it
    is fitted about its centre line (the grip is the same after a half turn: the value mod pi)."""
    from dataclasses import replace

    base, knob = box([-0.15, -0.15, 0.0], [0.15, 0.15, 0.02]), box([-0.025, -0.025, 0.02], [0.025, 0.025, 0.05])
    grip = box([-0.025, -0.006, 0.05], [0.025, 0.006, 0.07])
    V, F, articulation = assemble([base, trimesh.util.concatenate([knob, grip])],
                                  [Joint("knob", "revolute", [0, 0, 1], [0, 0, 0.02], -0.1, 0.1, 0, 1, 1.0)])
    observed = sample_surface(posed(V, articulation, [1.0]), F, 2048, np.random.default_rng(5)).points
    beside = replace(articulation, joints=[replace(articulation.joints[0], origin=np.array([0.04, 0.03, 0.02]))])
    fit = fit_joint_pose(V, F, beside, observed)
    assert np.linalg.norm(fit.articulation.joints[0].origin[:2]) < 0.002
    assert abs((fit.q[0] - 1.0 + np.pi / 2) % np.pi - np.pi / 2) < np.radians(5.0)


def test_a_door_the_view_does_not_show_stays_where_it_was():
    """One view sees the left door, turned 1.2 rad, and nothing of the right one: the right door gets
    no pull from the one-sided objective, and stays at 0 instead of where a random start left it."""
    V, F, articulation, _ = two_doors()
    observed = sample_surface(posed(V, articulation, [1.2, 0.0]), F, 4096, np.random.default_rng(7)).points
    seen = observed[observed[:, 0] < -0.1]  # the left third of the cabinet, the left door's side
    for seed in range(3):
        fit = fit_joint_pose(V, F, articulation, seen, partial=True, seed=seed)
        assert abs(fit.q[0] - 1.2) < np.radians(3.0) and fit.q[1] == 0.0, (seed, fit.q)
