"""Pair dataset geometry, optimisation, checkpoints (weights_only) and resume, on a small real 4D dataset."""
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from neurok_ros.cli import main as neurok_main
from neurok_ros.config_files import config_path
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.model import NeuROKModel
from neurok_ros.model.checkpoint import CheckpointError, load_checkpoint, load_model
from neurok_ros.training.instance_cache import InstanceCache, pose_sequence
from neurok_ros.training.pair_dataset import PairConfig, PairDataset, make_pair
from neurok_ros.training.run_config import load_run_config
from neurok_ros.training.similarity import random_rotation, transform_dual_quaternions, transform_points
from neurok_ros.training.trainer import collate, compute_loss, train, validation_pair_ids

sys.path.insert(0, str(Path(__file__).parent))
from toy_kinematic_data import drawer, laptop  # noqa: E402

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


@pytest.fixture(scope="module")
def dataset_dir(toy_dataset_dir):
    return toy_dataset_dir


@pytest.fixture(scope="module")
def tiny_run():
    return load_run_config(config_path("model/tiny.yaml"))


def test_dataset_facts_name_the_categories_left_out_of_training(dataset_dir):
    from neurok_ros.training.trainer import dataset_facts

    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    train = manifest["splits"]["train"]
    first = sorted(manifest["categories"])[0]
    facts = dataset_facts(dataset_dir, [f for f in train if not f.startswith(first + "_")])
    assert facts["holdout_categories"] == [first] and first not in facts["train_categories"]
    assert dataset_facts(dataset_dir, train)["holdout_categories"] == []


def test_similarity_of_rigid_transforms_matches_points():
    rng = np.random.default_rng(0)
    R_T = random_rotation(rng, "so3")
    motion = dq.from_rotation_translation(R_T, rng.normal(size=3))
    R, s, shift = random_rotation(rng, "so3"), 0.37, rng.normal(size=3)
    x = rng.normal(size=(20, 3))
    moved_then_mapped = transform_points(dq.apply(motion, x), R, s, shift)
    mapped_motion = transform_dual_quaternions(motion, R, s, shift)
    np.testing.assert_allclose(dq.apply(mapped_motion, transform_points(x, R, s, shift)), moved_then_mapped,
                               atol=1e-12)
    # the closed form equals conjugation by the similarity's rigid parts
    r = dq.from_rotation_translation(R, np.zeros(3))
    tau = dq.from_rotation_translation(np.eye(3), shift)
    conj = dq.compose(r, dq.compose(motion, dq.inverse(r)))
    conj = np.concatenate([conj[:4], s * conj[4:]])
    np.testing.assert_allclose(mapped_motion, dq.compose(tau, dq.compose(conj, dq.inverse(tau))), atol=1e-12)


@pytest.mark.parametrize("rotation", ["none", "upright", "so3"])
@pytest.mark.parametrize("make", [laptop, drawer])
def test_pair_dual_quaternions_move_m0_samples_onto_frame_b(make, rotation):
    poses = pose_sequence(make(seed=5, frames=5))
    config = PairConfig(input_points=300, query_points=200, rotation=rotation, augment=rotation != "none",
                        scale_range=(0.8, 1.2))
    rng = np.random.default_rng(1)
    for a, b in [(0, 4), (3, 1), (2, 2), (4, 0)]:  # the rest pose (0) and every frame can be M0
        item = make_pair(poses, a, b, rng, config)
        for points, dqs, targets in [("points", "input_dual_quaternions", "input_targets"),
                                     ("query_points", "target_dual_quaternions", "target_positions")]:
            moved = dq.apply(item[dqs].astype(np.float64), item[points].astype(np.float64))
            np.testing.assert_allclose(moved, item[targets], atol=1e-5)
        if a != b:  # a real motion, not the identity
            assert np.abs(item["target_positions"] - item["query_points"]).max() > 0.05
        extent = np.ptp(item["points"], axis=0).max()
        if rotation == "none":  # normalised by M0's bounding box: longest side 1, centred
            assert 0.9 < extent <= 1.0 + 1e-6 and np.abs(item["points"]).max() <= 0.5 + 1e-6
        else:
            assert 0.6 < extent <= 1.2 * 1.0 + 1e-6


def test_dataset_is_deterministic_and_caches(dataset_dir):
    config = PairConfig(input_points=32, query_points=16, cache_megabytes=1e-3)
    ds = PairDataset(dataset_dir, "train", config, seed=3)
    assert len(ds) == 6 * config.pairs_per_instance
    first, again = ds[5], ds[5]
    np.testing.assert_array_equal(first["points"], again["points"])
    other_epoch = ds[5 + len(ds)]  # same instance, next epoch: new poses and samples
    assert other_epoch["instance"] == first["instance"]
    assert not np.array_equal(other_epoch["points"], first["points"])
    assert len(ds.cache) == 1  # tiny budget: the LRU keeps only the latest instance
    cache = InstanceCache(100.0)
    path = dataset_dir / ds.files[0]
    assert cache.get(path) is cache.get(path) and cache.loads == 1


def test_validation_pairs_come_from_every_part_of_the_val_split(dataset_dir):
    ds = PairDataset(dataset_dir, "val", PairConfig(input_points=32, query_points=16))
    categories = {name.rsplit("_", 1)[0] for name in ds.files}
    assert len(categories) > 1
    ids = validation_pair_ids(len(ds), len(ds.files))  # as many pairs as val instances: one from each
    assert sorted(ds[i]["instance"] for i in ids) == list(range(len(ds.files)))
    assert validation_pair_ids(len(ds), 10 ** 6) == list(range(len(ds)))
    assert validation_pair_ids(len(ds), 0) == []
    # the released dataset's val split: 352 instances x 8 pairs; 256 pairs from 256 instances, end to end
    instances = [i // 8 for i in validation_pair_ids(352 * 8, 256)]
    assert len(set(instances)) == 256 and instances[0] == 0 and instances[-1] >= 350


@pytest.mark.parametrize("moved_points", [False, True])
def test_training_steps_lower_the_loss_on_a_fixed_batch(dataset_dir, tiny_run, moved_points):
    tiny_run = replace(tiny_run, model=replace(tiny_run.model, encoder_moved_points=moved_points))
    ds = PairDataset(dataset_dir, "train", tiny_run.data, seed=0, augment=False)
    batch = collate([ds[i] for i in range(0, 24, 3)])
    torch.manual_seed(0)
    model = NeuROKModel(tiny_run.model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    with torch.no_grad():
        before = compute_loss(model, batch, tiny_run, sample=False)
    for _ in range(40):
        optimizer.zero_grad()
        compute_loss(model, batch, tiny_run)["loss"].backward()
        optimizer.step()
    with torch.no_grad():
        after = compute_loss(model, batch, tiny_run, sample=False)
    assert after["loss"] < 0.6 * before["loss"], (before["loss"], after["loss"])
    assert after["point_error"] < before["point_error"]


def test_checkpoint_round_trip_with_weights_only(dataset_dir, tiny_run, tmp_path):
    out = tmp_path / "model.pt"
    result = train(dataset_dir, tiny_run, out, device="cpu", steps=3, progress=False)
    payload = torch.load(out, weights_only=True)  # plain tensors and primitives only
    assert payload["step"] == 3 and payload["config"] == tiny_run.with_training(steps=3).to_dict()
    assert payload["dataset"]["dataset_version"] and payload["dataset"]["train_instances"] == 6
    assert set(payload["metrics"]) >= {"val_loss", "val_point_error"}
    assert out.stat().st_size < 25 * 2 ** 20
    model, checkpoint = load_model(out)
    assert checkpoint["parameter_count"] == sum(p.numel() for p in model.parameters())
    ds = PairDataset(dataset_dir, "val", tiny_run.data, augment=False)
    batch = collate([ds[i] for i in range(4)])
    result.model.eval()
    with torch.no_grad():
        expected = compute_loss(result.model, batch, tiny_run, sample=False)
        got = compute_loss(model, batch, tiny_run, sample=False)
        prior_a = result.model.encode_prior(batch["points"])[0]
        prior_b = model.encode_prior(batch["points"])[0]
    torch.testing.assert_close(got["loss"], expected["loss"], rtol=0, atol=0)
    torch.testing.assert_close(prior_a, prior_b, rtol=0, atol=0)
    bogus = tmp_path / "bogus.pt"
    torch.save({"something": torch.zeros(2)}, bogus)
    with pytest.raises(CheckpointError, match="not a NeuROK checkpoint"):
        load_checkpoint(bogus)


def test_resume_continues_the_step_count_and_the_same_run(dataset_dir, tiny_run, tmp_path):
    constant = tiny_run.with_training(warmup_steps=0, min_learning_rate_ratio=1.0, checkpoint_every=100,
                                      val_every=100, log_every=1)
    straight = train(dataset_dir, constant, tmp_path / "straight.pt", device="cpu", steps=6, progress=False)
    out = tmp_path / "resumed.pt"
    train(dataset_dir, constant, out, device="cpu", steps=3, progress=False)
    resumed = train(dataset_dir, constant, out, device="cpu", steps=6, resume=True, progress=False)
    assert resumed.step == 6 and load_checkpoint(out)["step"] == 6
    steps = [json.loads(line)["step"] for line in (tmp_path / "resumed.pt.log.jsonl").read_text().splitlines()
             if "loss" in json.loads(line)]
    assert steps == [1, 2, 3, 4, 5, 6]
    for name, value in straight.model.state_dict().items():  # same batches, noise and AdamW state
        torch.testing.assert_close(resumed.model.state_dict()[name], value, rtol=1e-6, atol=1e-7)


def test_checkpoints_written_before_a_model_option_existed_resume_and_start_runs(dataset_dir, tiny_run, tmp_path):
    out = tmp_path / "old.pt"
    train(dataset_dir, tiny_run, out, device="cpu", steps=2, progress=False)
    payload = torch.load(out, weights_only=True)
    del payload["config"]["model"]["encoder_moved_points"]  # as written before the option was added
    torch.save(payload, out)
    assert train(dataset_dir, tiny_run, out, device="cpu", steps=3, resume=True, progress=False).step == 3
    started = train(dataset_dir, tiny_run, tmp_path / "next.pt", device="cpu", steps=1, progress=False, init_from=out)
    assert started.step == 1
    other = replace(tiny_run, model=replace(tiny_run.model, encoder_moved_points=True))
    with pytest.raises(NeurokInputError, match="model config differs"):
        train(dataset_dir, other, out, device="cpu", steps=4, resume=True, progress=False)


def test_cli_train_and_resume_errors(dataset_dir, tmp_path):
    out = tmp_path / "cli.pt"
    tiny = str(config_path("model/tiny.yaml"))
    args = ["train", "--data", str(dataset_dir), "--config", tiny, "--out", str(out), "--device", "cpu",
            "--steps", "2", "--no-progress"]
    assert neurok_main(args) == 0 and load_checkpoint(out)["step"] == 2
    assert neurok_main(args[:-2] + ["4", "--resume", "--no-progress"]) == 0 and load_checkpoint(out)["step"] == 4
    other = tmp_path / "other.yaml"
    other.write_text(Path(tiny).read_text().replace("width: 32", "width: 16"))
    assert neurok_main(["train", "--data", str(dataset_dir), "--config", str(other), "--out", str(out),
                        "--resume", "--steps", "5", "--no-progress"]) == 2  # model config differs
    assert neurok_main(["train", "--data", str(tmp_path / "nowhere"), "--out", str(out)]) == 2


def test_time_budget_stops_the_run_and_bends_the_schedule(dataset_dir, tiny_run, tmp_path):
    from neurok_ros.training.trainer import learning_rate

    cfg = tiny_run.with_training(steps=1000, warmup_steps=0, min_learning_rate_ratio=0.1).training
    assert learning_rate(10, cfg, 0.0) > 0.99 * cfg.learning_rate  # steps alone: barely decayed
    assert learning_rate(10, cfg, 1.0) == pytest.approx(0.1 * cfg.learning_rate)  # budget spent: the floor
    out = tmp_path / "budget.pt"
    run = tiny_run.with_training(log_every=1, checkpoint_every=10_000, val_every=10_000)
    result = train(dataset_dir, run, out, device="cpu", steps=100_000, progress=False, max_minutes=0.02)
    assert 0 < result.step < 100_000  # stopped by the 1.2 s budget, not by the step count
    payload = load_checkpoint(out)
    assert payload["step"] == result.step and payload["config"]["training"]["max_minutes"] == 0.02
    assert "val_loss" in payload["metrics"]  # validated at the stop


def test_config_overrides_reach_the_run_and_bad_ones_are_refused(dataset_dir, tmp_path):
    from neurok_ros.errors import NeurokInputError

    run = load_run_config(config_path("model/tiny.yaml"), ["model.output=displacement", "data.augment=false"])
    assert run.model.output == "displacement" and run.data.augment is False
    for bad in ("model.output", "nosection.x=1", "model.no_such_key=3"):
        with pytest.raises(NeurokInputError):
            load_run_config(config_path("model/tiny.yaml"), [bad])
    out = tmp_path / "displacement.pt"
    assert neurok_main(["train", "--data", str(dataset_dir), "--config", str(config_path("model/tiny.yaml")),
                        "--out", str(out), "--device", "cpu", "--steps", "1", "--no-progress",
                        "--set", "model.output=displacement", "--batch-size", "3"]) == 0
    training = load_checkpoint(out)["config"]
    assert training["model"]["output"] == "displacement" and training["training"]["batch_size"] == 3


def test_init_from_a_checkpoint_and_mean_reconstruction(dataset_dir, tiny_run, tmp_path, capsys):
    from dataclasses import replace

    from neurok_ros.model.losses import LossConfig, neurok_loss

    first = train(dataset_dir, tiny_run, tmp_path / "first.pt", device="cpu", steps=2, progress=False)
    again = train(dataset_dir, tiny_run, tmp_path / "again.pt", device="cpu", steps=0, progress=False,
                  init_from=tmp_path / "first.pt")
    assert "data config differs" not in capsys.readouterr().out
    # a second stage with another data config (here: no augmentation) says so
    flat = replace(tiny_run, data=replace(tiny_run.data, augment=False))
    train(dataset_dir, flat, tmp_path / "flat.pt", device="cpu", steps=0, progress=False,
          init_from=tmp_path / "first.pt")
    assert "data config differs from" in (out := capsys.readouterr().out) and "data.augment: True -> False" in out
    for name, value in first.model.state_dict().items():  # zero steps from the init: its weights
        torch.testing.assert_close(again.model.state_dict()[name], value)
    ds = PairDataset(dataset_dir, "train", tiny_run.data, seed=0, augment=False)
    batch = collate([ds[i] for i in range(2)])
    with torch.no_grad():
        outputs = first.model(batch["points"], batch["input_dual_quaternions"], batch["query_points"], sample=False)
    summed = neurok_loss(outputs, batch, "dual_quaternion", LossConfig(kl_weight=0.0))
    mean = neurok_loss(outputs, batch, "dual_quaternion", LossConfig(kl_weight=0.0, reconstruction="mean"))
    torch.testing.assert_close(mean["loss"], summed["loss"] / batch["query_points"].shape[1])


def test_plot_training_curves_from_real_logs(dataset_dir, tiny_run, tmp_path):
    run = tiny_run.with_training(log_every=1, val_every=2)
    train(dataset_dir, run, tmp_path / "a.pt", device="cpu", steps=4, progress=False)
    png = tmp_path / "curves.png"
    log = tmp_path / "a.pt.log.jsonl"
    assert neurok_main(["plot-training", f"first={log}", f"second={log}@4", "--out", str(png)]) == 0
    assert png.stat().st_size > 10_000
    assert neurok_main(["plot-training", f"missing={tmp_path / 'none.jsonl'}", "--out", str(png)]) == 2
