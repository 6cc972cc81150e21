"""Instance file format (deterministic bytes, no pickles, validation) and dataset splits."""
import json

import numpy as np
import pytest

from neurok_ros.data.instance_format import Instance, load_instance, save_instance, validate_instance
from neurok_ros.data.splits import make_splits
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry import dual_quaternion as dq

pytestmark = pytest.mark.unit


def _toy_instance(T=3, n=4):
    rest = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)[:n]
    shift = np.linspace(0, 0.3, T)[:, None, None] * np.array([1, 0, 0])
    frames = rest[None] + shift
    dqs = dq.from_rotation_translation(np.broadcast_to(np.eye(3), (T, n, 3, 3)),
                                       np.broadcast_to(shift, (T, n, 3)))
    return Instance(category="toy", kind="articulated", rest_vertices=rest,
                    faces=np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]), frames=frames,
                    times=np.arange(T) / 30, vertex_dual_quaternions=dqs,
                    joints=[{"name": "slide", "type": "prismatic", "axis": [1, 0, 0], "pivot": [0, 0, 0],
                             "range": [0, 1], "parent_part": 0, "child_parts": [0]}],
                    joint_values=np.linspace(0, 0.3, T)[:, None], generator={"name": "toy", "seed": 1})


def test_save_load_round_trip_and_identical_bytes(tmp_path):
    inst = _toy_instance()
    save_instance(tmp_path / "a.npz", inst)
    save_instance(tmp_path / "b.npz", inst)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    back = load_instance(tmp_path / "a.npz")
    assert back.category == "toy" and back.kind == "articulated"
    np.testing.assert_array_equal(back.frames, inst.frames)
    np.testing.assert_array_equal(back.vertex_dual_quaternions, inst.vertex_dual_quaternions)
    assert back.joints == inst.joints and back.generator == inst.generator
    assert validate_instance(back) == []


def test_validation_names_each_problem():
    inst = _toy_instance()
    inst.frames[1, 2, 0] = np.nan
    inst.faces[0, 0] = 9
    problems = " | ".join(validate_instance(inst))
    assert "frames contains NaN" in problems
    assert "face index out of range" in problems
    inst = _toy_instance()
    inst.times = inst.times[::-1].copy()
    assert validate_instance(inst) == ["times are not increasing"]


def test_unreadable_file_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(NeurokInputError, match="bad.npz: not a readable NeuROK instance file"):
        load_instance(path)


def test_splits_are_disjoint_deterministic_and_hold_out_categories():
    files = {c: [f"{c}_{i:04d}.npz" for i in range(20)] for c in ("laptop", "door", "cloth")}
    splits = make_splits(files, seed=3, val_fraction=0.1, test_fraction=0.2, holdout_categories=["door"])
    assert splits == make_splits(files, seed=3, val_fraction=0.1, test_fraction=0.2, holdout_categories=["door"])
    everything = [name for split in splits.values() for name in split]
    assert len(everything) == len(set(everything)) == 60
    assert splits["test_holdout"] == files["door"]
    for split in ("train", "val", "test"):
        assert not any(name.startswith("door") for name in splits[split])
    assert len([n for n in splits["test"] if n.startswith("laptop")]) == 4
    assert len([n for n in splits["val"] if n.startswith("laptop")]) == 2
    other = make_splits(files, seed=4, val_fraction=0.1, test_fraction=0.2, holdout_categories=[])
    assert other["test"] != splits["test"]
    with pytest.raises(NeurokInputError, match="not in the dataset"):
        make_splits(files, 0, 0.1, 0.1, ["sofa"])
    json.dumps(splits)


def test_tiny_category_keeps_a_training_instance():
    splits = make_splits({"lamp": ["lamp_0000.npz", "lamp_0001.npz"]}, 0, 0.45, 0.45, [])
    assert len(splits["train"]) == 1
