"""Build a checkpoint's posterior bank (neurok_ros/model/posterior_bank.py) from its training split.

    bank = build_posterior_bank(model, run.data, "DATASET_DIR", pairs_per_instance=8, neighbours=64)
    attach_posterior_bank("model.pt", bank, "model_with_bank.pt")

Pairs are drawn as in training (PairDataset, seeded); pairs whose poses are the same (a == b, or
frames where the object has stopped: no input point moves MIN_MOTION) are skipped, since q = 0 already
is the mesh at rest and a draw should be a motion. Without augmentation by
default: the keys and offsets are then those of the dataset's frame (z up, objects as generated). With
random rotations, a mesh's nearest keys often belong to a differently turned shape, whose offsets
turn the wrong part or about the wrong axis (measured in docs/model.md, "Posterior bank").
Cost: two posterior encodings and one prior encoding per pair (about 0.02 s per pair on 2 CPU cores).

refine_steps > 0 refines each moved pair's posterior mean by that many Adam steps on the pair's own
training objective (posterior_refinement.py): E_vae's means fall well short of sliding motions, the
refined ones much less. Each step decodes the batch once more (forward and backward). Tried on the
sliding categories and not adopted: the test fits did not change (docs/model.md).
"""
from __future__ import annotations

from pathlib import Path

import torch

from neurok_ros.errors import NeurokInputError
from neurok_ros.model.checkpoint import MAX_CHECKPOINT_MEGABYTES, CheckpointError, atomic_save, load_checkpoint
from neurok_ros.model.config import ModelConfig
from neurok_ros.model.losses import LossConfig
from neurok_ros.model.posterior_bank import PosteriorBank
from neurok_ros.training.pair_dataset import PairConfig, PairDataset, encoder_deformation
from neurok_ros.training.posterior_refinement import refine_posterior_means
from neurok_ros.training.trainer import collate

MIN_MOTION = 1e-3  # normalised units (longest side 1): a pair whose points all move less is no motion


def bank_pair_ids(instances: int, dataset_pairs: int, pairs_per_instance: int) -> list[int]:
    """PairDataset ids of pairs_per_instance pairs of each instance (later epochs past its own
    pairs_per_instance)."""
    size = instances * dataset_pairs
    return [(j // dataset_pairs) * size + i * dataset_pairs + j % dataset_pairs
            for i in range(instances) for j in range(pairs_per_instance)]


def moves(item: dict) -> bool:
    """Whether a PairDataset item is a motion: some input point moves at least MIN_MOTION."""
    return float(abs(item["input_targets"] - item["points"]).max()) >= MIN_MOTION  # a == b: no motion


def build_posterior_bank(model, data: PairConfig, data_dir: str | Path, pairs_per_instance: int = 8,
                         neighbours: int = 64, seed: int = 0, batch_size: int = 64,
                         split_file: str | Path | None = None, augment: bool = False,
                         progress: bool = True, loss: LossConfig = LossConfig(), refine_steps: int = 0,
                         refine_rate: float = 0.2) -> PosteriorBank:
    """Keys mu(M_a) and offsets mean q(z | a -> b) - mean q(z | a -> a) of the training split's pairs;
    with refine_steps, mean q(z | a -> b) refined on the pair's training objective under `loss`
    (the checkpoint's own LossConfig)."""
    from tqdm import tqdm

    from neurok_ros.kinematics.instance import no_deformation

    if pairs_per_instance < 1 or neighbours < 1 or batch_size < 1:
        raise NeurokInputError("pairs per instance, neighbours and batch size must be positive")
    if refine_steps < 0 or not refine_rate > 0:
        raise NeurokInputError(f"refine steps must be >= 0 and the refine rate positive, got {refine_steps} "
                               f"and {refine_rate}")
    dataset = PairDataset(data_dir, "train", data, seed=seed, split_file=split_file, augment=augment)
    if not dataset.files:
        raise NeurokInputError(f"{data_dir}: the train split is empty")
    ids = bank_pair_ids(len(dataset.files), data.pairs_per_instance, pairs_per_instance)
    device = next(model.parameters()).device
    keys, offsets, before, after = [], [], [], []
    with torch.no_grad():
        for start in tqdm(range(0, len(ids), batch_size), desc="posterior bank", unit="batch", disable=not progress):
            items = [dataset[i] for i in ids[start:start + batch_size]]
            items = [item for item in items if moves(item)]
            if not items:
                continue
            batch = {name: value.to(device) for name, value in collate(items).items()}
            points = batch["points"]
            moved, logvar = model.encode_posterior(points, encoder_deformation(batch, model.output))
            rest, _ = model.encode_posterior(points, no_deformation(points, model.output))
            prior_mean, shape_tokens = model.encode_prior(points)
            if refine_steps > 0:
                moved, objective, refined = refine_posterior_means(model, moved, logvar, prior_mean, shape_tokens,
                                                                   batch, loss, refine_steps, refine_rate)
                before.append(objective.cpu())
                after.append(refined.cpu())
            keys.append(prior_mean.flatten(1).cpu())
            offsets.append((moved - rest).flatten(1).cpu())
    facts = {"data_dir": str(data_dir), "train_instances": len(dataset.files),
             "pairs_per_instance": int(pairs_per_instance), "seed": int(seed), "augment": bool(augment),
             "split_file": str(split_file) if split_file else None, "refine_steps": int(refine_steps),
             "refine_rate": float(refine_rate)}
    if before:  # the training objective of the moved pairs, E_vae's means and the refined ones
        facts["objective_median"] = {"encoder": float(torch.cat(before).median()),
                                     "refined": float(torch.cat(after).median())}
    return PosteriorBank(torch.cat(keys).half(), torch.cat(offsets).half(), int(neighbours), facts)


def attach_posterior_bank(checkpoint: str | Path, bank: PosteriorBank, out: str | Path,
                          max_megabytes: float = MAX_CHECKPOINT_MEGABYTES) -> Path:
    """Write checkpoint (loaded weights_only) with its "posterior_bank" replaced by bank, to out."""
    payload = load_checkpoint(checkpoint)
    if bank.k != ModelConfig.from_dict(payload["config"]["model"]).latent_size:
        raise CheckpointError(f"{checkpoint}: the bank's latents (k = {bank.k}) do not fit this model")
    payload["posterior_bank"] = bank.to_payload()
    out = Path(out)
    atomic_save(payload, out, max_megabytes)
    return out
