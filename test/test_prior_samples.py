"""The prior-sample lid measurements on laptops whose poses are known exactly: the dataset's own frames
(valid, at their true angles), a bent lid, a lid moved off its hinge, and the real model end to end."""
import numpy as np
import pytest

from neurok_ros.data.articulated import laptop
from neurok_ros.evaluation.prior_samples import distinct_angles, lid_sample_measures, prior_lid_samples
from neurok_ros.kinematics.instance import EncodingConfig, load_default_model

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def generated():
    inst = laptop.generate(3)
    joint = inst.joints[0]
    lid = np.isin(np.asarray(inst.part_ids), joint["child_parts"])
    return inst, lid, np.asarray(joint["axis"], np.float64), np.asarray(joint["pivot"], np.float64)


def test_distinct_angles_counts_separated_values():
    assert distinct_angles(np.array([0.0, 0.5, 1.9, 2.1, 10.0, -3.0]), 2.0) == 4  # -3, 0, 2.1, 10
    assert distinct_angles(np.array([]), 2.0) == 0


def test_the_datasets_own_frames_are_valid_at_their_joint_angles(generated):
    inst, lid, axis, pivot = generated
    frames = np.asarray(inst.frames, np.float64)
    result = lid_sample_measures(frames[0], lid, axis, pivot, frames[1:])
    expected = np.degrees(inst.joint_values[1:, 0] - inst.joint_values[0, 0])
    np.testing.assert_allclose(result["angles_deg"], expected, atol=1e-4)
    assert result["valid_count"] == len(frames) - 1
    assert max(result["lid_bend"]) < 1e-6 and max(result["hinge_gap"]) < 1e-6
    assert result["distinct_valid_angles"] == distinct_angles(expected, 2.0) >= 2


def test_a_bent_lid_and_a_detached_lid_are_not_valid(generated):
    inst, lid, axis, pivot = generated
    V = np.asarray(inst.frames[0], np.float64)
    size = np.linalg.norm(np.ptp(V[lid], axis=0))
    arm = V[lid] - pivot
    distance = np.linalg.norm(arm - np.outer(arm @ axis, axis), axis=1)  # from the hinge line
    normal = np.cross(axis, [0.0, 0.0, 1.0] if abs(axis[2]) < 0.9 else [1.0, 0.0, 0.0])
    bent = V.copy()  # the far edge curls by a fifth of the lid's size, the hinge stays
    bent[lid] += np.outer(0.2 * size * (distance / distance.max()) ** 2, normal / np.linalg.norm(normal))
    detached = V.copy()
    detached[lid] += 0.1 * size * np.array([0.0, 0.0, 1.0])
    result = lid_sample_measures(V, lid, axis, pivot, np.stack([bent, detached, V]))
    assert result["valid"] == [False, False, True]
    assert result["lid_bend"][0] > 0.02 and result["hinge_gap"][0] < result["hinge_gap"][1]
    assert result["hinge_gap"][1] == pytest.approx(0.1, rel=1e-6) and result["lid_bend"][1] < 1e-9


def test_prior_samples_of_the_shipped_model_are_measured(generated):
    model, _ = load_default_model()
    result = prior_lid_samples(model, generated[0], "laptop seed 3", count=4)
    assert result["samples"].shape == (4, len(result["vertices"]), 3)
    assert len(result["angles_deg"]) == 4 and np.isfinite(result["angles_deg"]).all()
    assert 0 <= result["distinct_valid_angles"] <= result["valid_count"] <= 4


def test_the_shipped_posterior_bank_turns_an_unseen_lid_to_many_valid_angles(generated):
    """The must-show of docs/model.md: 8 samples of an unseen laptop at 8 different valid lid angles
    (measured 8 / 8 here); N(mu, I) draws of the same model stay within a few degrees of the input."""
    model, _ = load_default_model()
    assert model.posterior_bank is not None
    bank = prior_lid_samples(model, generated[0], "laptop seed 3", count=8, pool=64)
    assert bank["prior"] == "posterior bank" and bank["pool"] == 64
    assert bank["valid_count"] >= 7 and bank["distinct_valid_angles"] >= 7
    gaussian = prior_lid_samples(model, generated[0], "laptop seed 3", count=8,
                                 encoding=EncodingConfig(posterior_bank=False))
    assert gaussian["prior"] == "N(mu, I)"
    assert bank["angle_range_deg"] > 4 * gaussian["angle_range_deg"]
