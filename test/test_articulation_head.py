"""The articulation head: its training targets, its vote grouping, training and loading."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from neurok_ros.articulation.head_readout import head_parts, line_distances
from neurok_ros.data.articulated import ARTICULATED_CATEGORIES
from neurok_ros.errors import NeurokInputError
from neurok_ros.model.articulation_head import ArticulationHead, load_head, save_head
from neurok_ros.training.articulation_examples import articulation_example

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]


def one_hot(classes: np.ndarray) -> np.ndarray:
    return np.eye(3)[classes]


def test_laptop_targets_put_the_lid_on_its_hinge():
    instance = ARTICULATED_CATEGORIES["laptop"](5, 16)
    example = articulation_example(instance, 7, np.random.default_rng(0))
    classes, queries = example["classes"], example["queries"].astype(np.float64)
    assert set(np.unique(classes)) == {0, 1}
    lid = classes == 1
    axes = example["axis"][lid].astype(np.float64)
    assert np.allclose(np.abs(axes @ axes[0]), 1.0, atol=1e-5)  # one hinge for the whole lid
    hinge_points = queries[lid] + example["offset"][lid]
    assert line_distances(hinge_points, hinge_points[0], axes[0]).max() < 1e-4
    assert np.abs(example["offset"][~lid]).max() == 0 and np.abs(example["axis"][~lid]).max() == 0
    # the hinge lies on the laptop's edge: within the normalised box, at the lid's border
    assert np.abs(hinge_points).max() <= 0.5 + 1e-3


def test_perfect_votes_give_each_door_its_hinge():
    instance = ARTICULATED_CATEGORIES["refrigerator"](2, 16)
    example = articulation_example(instance, 3, np.random.default_rng(1), query_points=2048)
    classes = example["classes"]
    pieces = np.zeros(len(classes), dtype=np.int64)  # no welded pieces: distances alone connect
    labels, votes = head_parts(example["queries"].astype(np.float64), one_hot(classes),
                               example["axis"].astype(np.float64), example["offset"].astype(np.float64), pieces)
    doors = [j for j in instance.joints if j["type"] == "revolute"]
    assert sum(v.type == "revolute" for v in votes) == len(doors)
    for group, vote in enumerate(votes, start=1):
        members = labels == group
        true_axis = example["axis"][members][0].astype(np.float64)
        assert abs(vote.axis @ true_axis) > np.cos(np.radians(1.0))
        assert (np.abs(example["axis"][members] @ true_axis) > 0.999).all()  # one joint per group
        if vote.type == "revolute":
            hinge = (example["queries"][members] + example["offset"][members]).astype(np.float64)
            assert line_distances(hinge, vote.origin, vote.axis).max() < 0.02
    assert (labels[classes == 0] == 0).all()


def test_head_trains_saves_and_loads_weights_only(tmp_path):
    from neurok_ros.kinematics.instance import load_default_model
    from neurok_ros.training.articulation_training import train_articulation_head

    model, _ = load_default_model()
    instances = [ARTICULATED_CATEGORIES["laptop"](s, 16) for s in (1, 2)]
    path = tmp_path / "head.pt"
    best = train_articulation_head(model, instances, instances, path, minutes=5, batch_size=2, max_steps=3,
                                   val_every=3, progress=False)
    assert {"loss", "class_accuracy", "axis_deg"} <= set(best)
    head = load_head(path)
    out = head(torch.zeros(1, 16, 128), torch.zeros(1, 5, 3))
    assert out.logits.shape == (1, 5, 3) and torch.allclose(out.axis.norm(dim=-1), torch.ones(1, 5), atol=1e-4)
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(NeurokInputError):
        load_head(tmp_path / "bad.pt")
    save_head(tmp_path / "again.pt", ArticulationHead(), {"note": "untrained"})
    assert isinstance(load_head(tmp_path / "again.pt"), ArticulationHead)
