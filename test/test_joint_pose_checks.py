"""The pose-fit check of `neurok eval-articulation --pose-fit` (evaluation/joint_pose_checks.py): its
pairs and its joint-value scoring, on a procedural laptop and its own parts and joints."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from neurok_ros.articulation.evaluation import true_articulation
from neurok_ros.data.articulated import ARTICULATED_CATEGORIES
from neurok_ros.evaluation.joint_pose_checks import ANGLE_DEG, joint_values_right, pose_pair_frames

pytestmark = [pytest.mark.unit]


def test_pairs_are_the_largest_single_joint_pose_and_the_most_moved_one():
    instance = ARTICULATED_CATEGORIES["cabinet"](2, 16)  # several joints
    frames = pose_pair_frames(instance)
    values = instance.joint_values
    single = [f for f in range(1, instance.num_frames) if values[f, 0] != 0 and np.all(values[f, 1:] == 0)]
    motion = [np.linalg.norm(frame - instance.frames[0], axis=1).mean() for frame in instance.frames]
    assert set(frames) <= set(range(instance.num_frames)) and 1 <= len(frames) <= 2
    assert int(np.argmax(motion)) in frames
    if single:
        assert max(single, key=lambda f: abs(values[f, 0])) in frames


def test_a_joint_value_is_right_within_tolerance_modulo_a_turn_and_either_axis_sign():
    instance = ARTICULATED_CATEGORIES["laptop"](3, 16)
    readout = true_articulation(instance, 0)
    moved = instance.joint_values[:, 0] - instance.joint_values[0, 0]
    target = int(np.argmax(np.abs(moved)))
    value = float(moved[target])
    assert abs(value) > np.radians(20)
    tolerance = np.radians(ANGLE_DEG)
    assert joint_values_right(readout, instance, np.array([value + 0.8 * tolerance]), target)[0]
    assert joint_values_right(readout, instance, np.array([value + 2 * np.pi]), target)[0]
    assert not joint_values_right(readout, instance, np.array([value + 1.2 * tolerance]), target)[0]
    assert not any(joint_values_right(readout, instance, None, target)[:2])  # no joint fit: wrong
    flipped = copy.deepcopy(readout)
    flipped.joints[0].axis = -flipped.joints[0].axis  # the same joint, its coordinate the other way
    right, alike, values = joint_values_right(flipped, instance, np.array([-value]), target)
    assert right and alike and values == [(instance.joints[0]["name"], pytest.approx(value), pytest.approx(value))]
    as_slider = copy.deepcopy(readout)
    as_slider.joints[0].type = "prismatic"
    assert not joint_values_right(as_slider, instance, np.array([value]), target)[0]  # the type must be right


def test_a_wrong_value_whose_part_looks_as_it_does_at_the_truth_is_alike_not_right():
    """As a wheel's half turn: the value is off, the surface the same (here: the target pose itself
    reported with a wrong value); the rest pose, far from the target, is neither."""
    instance = ARTICULATED_CATEGORIES["laptop"](3, 16)
    readout = true_articulation(instance, 0)
    moved = instance.joint_values[:, 0] - instance.joint_values[0, 0]
    target = int(np.argmax(np.abs(moved)))
    posed, rest = instance.frames[target].astype(np.float64), instance.frames[0].astype(np.float64)
    wrong = np.array([moved[target] + 0.5])
    assert joint_values_right(readout, instance, wrong, target, posed)[:2] == (False, True)
    assert joint_values_right(readout, instance, wrong, target, rest)[:2] == (False, False)
