"""The posterior bank: nearest-key offsets, draws, the build from a real 4D dataset (offsets equal the
posterior means' differences), the weights_only round trip, and `neurok bank` / `neurok sample`."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from neurok_ros.cli import main as neurok_main
from neurok_ros.config_files import config_path
from neurok_ros.kinematics.instance import encode_mesh, no_deformation
from neurok_ros.model import NeuROKModel
from neurok_ros.model.checkpoint import CheckpointError, load_checkpoint, load_model, save_checkpoint
from neurok_ros.model.posterior_bank import PosteriorBank, bank_draws
from neurok_ros.training.pair_dataset import PairDataset, encoder_deformation
from neurok_ros.training.posterior_bank_build import attach_posterior_bank, bank_pair_ids, build_posterior_bank, moves
from neurok_ros.training.posterior_refinement import pair_objective, refine_posterior_means
from neurok_ros.training.run_config import load_run_config
from neurok_ros.training.trainer import collate

sys.path.insert(0, str(Path(__file__).parent))
from toy_kinematic_data import laptop  # noqa: E402

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(run config, model, checkpoint path) of an untrained tiny model (seeded)."""
    run = load_run_config(config_path("model/tiny.yaml"))
    torch.manual_seed(0)
    model = NeuROKModel(run.model).eval()
    path = save_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny.pt", model, run.to_dict(), step=0)
    return run, model, path


def test_nearest_offsets_follow_the_keys_and_draws_add_them_to_the_rest_latent():
    keys = torch.tensor([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0], [0.0, 2.0]])
    offsets = torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]])
    bank = PosteriorBank(keys.half(), offsets.half(), neighbours=2)
    nearest = bank.nearest_offsets(torch.tensor([0.9, 0.1], dtype=torch.float64))
    assert nearest.dtype == torch.float64
    np.testing.assert_array_equal(nearest.numpy(), [[2.0, 2.0], [1.0, 1.0]])
    rest = torch.tensor([10.0, -10.0], dtype=torch.float64)
    draws = bank_draws(nearest, rest, 2, seed=3)
    assert sorted(map(tuple, (draws - rest).tolist())) == [(1.0, 1.0), (2.0, 2.0)]  # without replacement
    np.testing.assert_array_equal(bank_draws(nearest, rest, 2, seed=3), draws)  # seeded
    assert bank_draws(nearest, rest, 5, seed=0).shape == (5, 2)  # with replacement past E
    np.testing.assert_allclose(bank_draws(nearest, rest, 1, seed=0, temperature=0.5)[0] - rest,
                               0.5 * (bank_draws(nearest, rest, 1, seed=0)[0] - rest))
    with pytest.raises(ValueError, match="cannot serve"):
        bank.nearest_offsets(torch.zeros(3))
    with pytest.raises(ValueError, match="non-empty"):
        PosteriorBank(torch.zeros(0, 2), torch.zeros(0, 2), 1)


def test_pair_ids_go_past_the_datasets_pairs_into_later_epochs():
    assert bank_pair_ids(2, 3, 4) == [0, 1, 2, 6, 3, 4, 5, 9]


def test_build_stores_prior_means_and_posterior_differences(toy_dataset_dir, tiny):
    run, model, _ = tiny
    bank = build_posterior_bank(model, run.data, toy_dataset_dir, pairs_per_instance=6, neighbours=5, progress=False)
    dataset = PairDataset(toy_dataset_dir, "train", run.data, augment=False)  # the bank default
    items = [dataset[i] for i in bank_pair_ids(len(dataset.files), run.data.pairs_per_instance, 6)]
    kept = [item for item in items if moves(item)]
    assert len(kept) > 0 and all(item["pose_a"] != item["pose_b"] for item in kept)
    assert len(bank) == len(kept) and bank.k == run.model.num_tokens * run.model.token_dim
    assert bank.keys.dtype == torch.float16 and bank.neighbours == 5
    batch = collate(kept[:3])
    with torch.no_grad():
        moved, _ = model.encode_posterior(batch["points"], encoder_deformation(batch, model.output))
        rest, _ = model.encode_posterior(batch["points"], no_deformation(batch["points"], model.output))
        mu, _ = model.encode_prior(batch["points"])
    np.testing.assert_allclose(bank.offsets[:3].float(), (moved - rest).flatten(1), atol=2e-3, rtol=2e-3)
    np.testing.assert_allclose(bank.keys[:3].float(), mu.flatten(1), atol=2e-3, rtol=2e-3)
    assert float((moved - rest).abs().max()) > 1e-3  # the pairs move: the offsets are not zero


def test_refined_means_lower_every_pairs_own_training_objective(toy_dataset_dir, tiny):
    run, model, _ = tiny
    dataset = PairDataset(toy_dataset_dir, "train", run.data, augment=False)
    batch = collate([item for item in (dataset[i] for i in range(12)) if moves(item)][:6])
    with torch.no_grad():
        mean, logvar = model.encode_posterior(batch["points"], encoder_deformation(batch, model.output))
        prior_mean, shape = model.encode_prior(batch["points"])
    same, before, after = refine_posterior_means(model, mean, logvar, prior_mean, shape, batch, run.loss, 0, 0.2)
    assert torch.equal(same, mean) and torch.equal(before, after)
    refined, before, after = refine_posterior_means(model, mean, logvar, prior_mean, shape, batch, run.loss, 20, 0.2)
    assert refined.shape == mean.shape and not any(p.grad is not None for p in model.parameters())
    assert bool((after < before).all())  # every pair gains
    with torch.no_grad():  # what it returns is what the refined means score
        np.testing.assert_allclose(pair_objective(model, refined, logvar, prior_mean, shape, batch, run.loss),
                                   after, rtol=1e-5)
        # the objective is the training loss's, pair by pair: reconstruction + kl_weight * KL at the mean
        from neurok_ros.model.losses import neurok_loss

        outputs = {"prediction": model.decode(mean, batch["query_points"], shape), "posterior_mean": mean,
                   "posterior_logvar": logvar, "prior_mean": prior_mean}
        assert float(neurok_loss(outputs, batch, model.output, run.loss)["loss"]) == pytest.approx(
            float(before.mean()), rel=1e-5)


def test_a_refined_bank_moves_its_offsets_and_records_the_objectives(toy_dataset_dir, tiny):
    run, model, _ = tiny
    plain = build_posterior_bank(model, run.data, toy_dataset_dir, pairs_per_instance=3, neighbours=3, progress=False)
    refined = build_posterior_bank(model, run.data, toy_dataset_dir, pairs_per_instance=3, neighbours=3,
                                   progress=False, loss=run.loss, refine_steps=10, refine_rate=0.2)
    assert len(refined) == len(plain) and torch.equal(refined.keys, plain.keys)
    assert float((refined.offsets.float() - plain.offsets.float()).abs().max()) > 1e-2
    assert plain.facts["refine_steps"] == 0 and "objective_median" not in plain.facts
    medians = refined.facts["objective_median"]
    assert refined.facts["refine_steps"] == 10 and medians["refined"] < medians["encoder"]


def test_bank_round_trips_through_a_weights_only_checkpoint_and_serves_the_instance(toy_dataset_dir, tiny, tmp_path):
    run, model, path = tiny
    bank = build_posterior_bank(model, run.data, toy_dataset_dir, pairs_per_instance=4, neighbours=3, progress=False)
    out = attach_posterior_bank(path, bank, tmp_path / "with_bank.pt")
    loaded, payload = load_model(out)
    assert loaded.posterior_bank is not None and len(loaded.posterior_bank) == len(bank)
    assert torch.equal(loaded.posterior_bank.offsets, bank.offsets)
    assert load_model(path)[0].posterior_bank is None  # the input checkpoint is left as it was
    inst = laptop(seed=11, frames=4)
    instance = encode_mesh(loaded, inst.frames[2], inst.faces)
    expected = bank.nearest_offsets(instance.prior_mean)
    assert instance.motion_offsets.shape == (3, bank.k)
    np.testing.assert_allclose(instance.motion_offsets, expected)
    draws = instance.sample_latents(3, seed=0) - instance.rest_latent
    assert sorted(draws.sum(1).tolist()) == pytest.approx(sorted(expected.sum(1).tolist()), rel=1e-6)
    # without the bank (EncodingConfig.posterior_bank=False), the N(mu, I) prior as before
    from neurok_ros.kinematics.instance import EncodingConfig

    plain = encode_mesh(loaded, inst.frames[2], inst.faces, EncodingConfig(posterior_bank=False))
    assert plain.motion_offsets is None
    z = plain.sample_latents(256, seed=0)
    assert abs(float((z - plain.prior_mean).std()) - 1.0) < 0.05
    # a bank of the wrong size for the model is refused
    wrong = PosteriorBank(torch.zeros(2, bank.k + 1), torch.zeros(2, bank.k + 1), 1)
    with pytest.raises(CheckpointError, match="do not fit"):
        attach_posterior_bank(path, wrong, tmp_path / "wrong.pt")
    assert "posterior_bank" in load_checkpoint(out)


def test_cli_bank_then_sample(toy_dataset_dir, tiny, tmp_path, capsys):
    _, _, path = tiny
    out = tmp_path / "banked.pt"
    assert neurok_main(["bank", "--data", str(toy_dataset_dir), "--checkpoint", str(path), "--out", str(out),
                        "--pairs-per-instance", "3", "--neighbours", "4", "--no-progress", "--device", "cpu",
                        "--refine-steps", "2"]) == 0
    printed = capsys.readouterr().out
    assert "neighbours per mesh" in printed and "refined posterior means (2 steps)" in printed
    assert load_model(out)[0].posterior_bank.neighbours == 4
    assert load_model(out)[0].posterior_bank.facts["refine_steps"] == 2
    inst = laptop(seed=12, frames=4)
    mesh = tmp_path / "laptop.ply"
    import trimesh

    trimesh.Trimesh(inst.frames[1], inst.faces, process=False).export(mesh)
    sheet, npz = tmp_path / "sheet.png", tmp_path / "samples.npz"
    assert neurok_main(["sample", str(mesh), "-n", "3", "--out", str(sheet), "--npz", str(npz),
                        "--checkpoint", str(out), "--device", "cpu"]) == 0
    assert sheet.stat().st_size > 0 and np.load(npz)["vertices"].shape == (3, len(inst.frames[1]), 3)
    assert "posterior bank" in capsys.readouterr().out
    assert neurok_main(["bank", "--data", str(tmp_path / "missing"), "--checkpoint", str(path),
                        "--out", str(tmp_path / "x.pt"), "--no-progress"]) == 2
    assert "error:" in capsys.readouterr().err and not (tmp_path / "x.pt").exists()
    assert neurok_main(["bank", "--data", str(toy_dataset_dir), "--checkpoint", str(path), "--out",
                        str(tmp_path / "y.pt"), "--refine-steps", "-1", "--no-progress"]) == 2
    assert "refine steps must be >= 0" in capsys.readouterr().err and not (tmp_path / "y.pt").exists()
