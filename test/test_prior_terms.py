"""The prior terms of the loss (coverage and draw rigidity): their values on known point sets, the pose
sets that come with each pair, and training runs in which they move the prior draws."""
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from neurok_ros.config_files import config_path
from neurok_ros.errors import NeurokInputError
from neurok_ros.model import NeuROKModel
from neurok_ros.model.draw_rigidity import rigid_pairs, rigidity_loss
from neurok_ros.model.prior_coverage import coverage_loss, pose_set_distances
from neurok_ros.training.instance_cache import pose_sequence
from neurok_ros.training.pair_dataset import PairConfig, PairDataset, make_pair
from neurok_ros.training.run_config import load_run_config
from neurok_ros.training.similarity import axis_angle_matrix
from neurok_ros.training.trainer import collate, compute_loss

sys.path.insert(0, str(Path(__file__).parent))
from toy_kinematic_data import laptop, write_toy_dataset  # noqa: E402

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


def test_set_distances_and_both_halves_of_the_loss():
    rng = np.random.default_rng(0)
    poses = torch.as_tensor(rng.normal(size=(2, 5, 7, 3)))
    d = pose_set_distances(poses[:, :3] + 0.1, poses)
    expected = ((poses[:, :3, None] + 0.1 - poses[:, None]) ** 2).sum((-1, -2))
    torch.testing.assert_close(d, expected.float())
    # draws that are the poses, in another order: nothing to pay
    assert coverage_loss(poses[:, [4, 2, 0, 3, 1]], poses).abs().max() < 1e-5
    # every draw on one valid pose: the first half is 0, the second pays for the poses nobody reaches
    collapsed = poses[:, :1].expand(-1, 4, -1, -1)
    loss = coverage_loss(collapsed, poses)
    unreached = ((poses[:, :1] - poses) ** 2).sum((-1, -2)).mean(1)
    torch.testing.assert_close(loss, unreached.float())
    # draws off every pose pay the first half too
    assert (coverage_loss(collapsed + 1.0, poses) > loss + 6.9).all()


@pytest.mark.parametrize("rotation", ["none", "upright"])
def test_pose_positions_are_the_query_points_in_every_pose(rotation):
    poses = pose_sequence(laptop(seed=3, frames=6))  # rest + 6 frames
    config = PairConfig(input_points=64, query_points=40, coverage_points=16, coverage_poses=7,
                        rotation=rotation, augment=rotation != "none")
    item = make_pair(poses, 2, 5, np.random.default_rng(4), config)
    assert item["pose_positions"].shape == (7, 16, 3)
    np.testing.assert_allclose(item["pose_positions"][2], item["query_points"][:16], atol=1e-5)  # pose a = M0
    np.testing.assert_allclose(item["pose_positions"][5], item["target_positions"][:16], atol=1e-5)
    assert np.abs(item["pose_positions"][6] - item["pose_positions"][0]).max() > 0.05  # the lid moves
    fewer = make_pair(poses, 2, 5, np.random.default_rng(4), replace(config, coverage_poses=3))
    np.testing.assert_allclose(fewer["pose_positions"], item["pose_positions"][[0, 3, 6]], atol=1e-6)
    assert "pose_positions" not in make_pair(poses, 2, 5, np.random.default_rng(4), replace(config, coverage_points=0))


def test_rigidity_is_zero_for_poses_and_rigid_motions_and_counts_bends():
    poses = pose_sequence(laptop(seed=3, frames=6))
    config = PairConfig(input_points=16, query_points=96, coverage_points=96, coverage_poses=7, augment=False)
    item = make_pair(poses, 0, 0, np.random.default_rng(2), config)
    pose_positions = torch.as_tensor(item["pose_positions"])[None]  # (1, 7, C, 3)
    mask, reference = rigid_pairs(pose_positions, 0.002)
    start = pose_positions[0, 0]
    moving = (pose_positions[0, -1] - start).norm(dim=-1) > 1e-3  # points on the turning lid
    assert moving.any() and (~moving).any()
    assert mask[0][moving][:, moving].float().mean() > 0.95  # lid with lid: rigid
    assert mask[0][~moving][:, ~moving].float().mean() > 0.95  # base with base: rigid
    swinging = (pose_positions[0, -1] - start).norm(dim=-1) > 0.1  # far from the hinge line
    assert swinging.any() and not mask[0][swinging[:, None] & ~moving[None]].any()  # across the hinge
    rotation = torch.as_tensor(axis_angle_matrix(np.array([0.3, -0.2, 0.9]), 0.7), dtype=torch.float32)
    draws = torch.stack([pose_positions[0, 3], start @ rotation.T + 0.2])[None]  # another pose; a rigid motion
    assert rigidity_loss(draws, pose_positions, 0.002).item() < 1e-6
    bent = start.clone()
    bent[moving] += 0.1 * torch.as_tensor([0.0, 0.0, 1.0]) * (start[moving, :1] - start[moving, 0].mean())
    assert rigidity_loss(bent[None, None], pose_positions, 0.002).item() > 1e-3


def test_coverage_needs_pose_sets():
    with pytest.raises(NeurokInputError, match="coverage_points"):
        load_run_config(config_path("model/tiny.yaml"), ["loss.coverage_weight=1.0"])
    with pytest.raises(NeurokInputError, match="coverage_points"):
        load_run_config(config_path("model/tiny.yaml"), ["loss.rigidity_weight=1.0"])
    with pytest.raises(NeurokInputError, match="coverage_points"):
        PairConfig(query_points=8, coverage_points=9)


def _term_after_training(run, measure, batch, term="coverage", steps=40):
    """(term before, after) `steps` AdamW steps of `run` on one batch, both measured with `measure`
    and the same draws."""
    torch.manual_seed(0)
    model = NeuROKModel(run.model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

    def coverage_now():
        with torch.no_grad():
            torch.manual_seed(1)
            return float(compute_loss(model, batch, measure, sample=False)[term])

    before = coverage_now()
    for _ in range(steps):
        optimizer.zero_grad()
        compute_loss(model, batch, run)["loss"].backward()
        optimizer.step()
    return before, coverage_now()


def test_training_with_coverage_brings_prior_draws_onto_the_poses(tmp_path):
    data = write_toy_dataset(tmp_path / "toy4d", train=2, val=1, frames=5)
    run = load_run_config(config_path("model/tiny.yaml"),
                          ["data.coverage_points=32", "data.coverage_poses=6", "loss.coverage_weight=1.0",
                           "loss.coverage_draws=4", "data.augment=false"])
    batch = collate([PairDataset(data, "train", run.data, seed=0)[i] for i in range(0, 24, 3)])
    assert batch["pose_positions"].shape == (8, 6, 32, 3)
    before, after = _term_after_training(run, run, batch)
    assert before > 0 and after < 0.5 * before, (before, after)
    # the same steps without the term: reconstruction alone does not bring the draws there
    off = replace(run, loss=replace(run.loss, coverage_weight=0.0))
    assert float(compute_loss(NeuROKModel(run.model), batch, off)["coverage"]) == 0.0
    _, after_without = _term_after_training(off, run, batch)
    assert after < 0.7 * after_without, (after, after_without)


def test_training_with_rigidity_keeps_the_datas_rigid_distances_in_prior_draws(tmp_path):
    data = write_toy_dataset(tmp_path / "toy4d", train=2, val=1, frames=5)
    run = load_run_config(config_path("model/tiny.yaml"),
                          ["data.coverage_points=32", "data.coverage_poses=6", "loss.rigidity_weight=100.0",
                           "loss.coverage_weight=1.0", "loss.coverage_draws=4", "data.augment=false"])
    batch = collate([PairDataset(data, "train", run.data, seed=0)[i] for i in range(0, 24, 3)])
    before, after = _term_after_training(run, run, batch, "rigidity")
    only_coverage = replace(run, loss=replace(run.loss, rigidity_weight=0.0))
    _, after_without = _term_after_training(only_coverage, run, batch, "rigidity")
    assert before > 0 and after < 0.5 * after_without, (before, after, after_without)
