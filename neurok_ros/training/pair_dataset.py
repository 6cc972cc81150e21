"""Training pairs (M0, deformation to another pose) sampled from a 4D dataset folder.

One pair: an instance, two poses a and b among its rest pose and frames (any pose can be M0).
Surface points are sampled area-uniformly on M0 = pose a (face id + barycentric); the same samples
evaluated on pose b are the targets; the per-point rigid transform a -> b is the barycentric
dual-quaternion blend of the three corners' dq_b * dq_a^-1 (exact for a face inside one rigid part).
With augmentation a random rotation is applied to the pair first; then the pair is normalised by
M0's bounding box (docs/architecture.md §4, as at inference); then a random isotropic scale about the origin.
Everything is one similarity x -> s R x + shift, applied consistently to points and dual quaternions.

Item of a PairDataset (float32 numpy arrays, normalised frame of M0):
  points (N, 3), input_dual_quaternions (N, 8), input_targets (N, 3)     encoder samples on M0
  query_points (Q, 3), target_dual_quaternions (Q, 8), target_positions (Q, 3)  decoder samples
  pose_a, pose_b, instance (int)
  pose_positions (P, C, 3)   with data.coverage_points = C > 0: the first C query points in each of
                             P = coverage_poses poses of the instance (rest and frames, evenly spaced),
                             for the prior coverage loss (neurok_ros/model/prior_coverage.py)
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset

from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.surface_sampling import evaluate_samples, sample_surface
from neurok_ros.training.instance_cache import InstanceCache, PoseSequence
from neurok_ros.training.similarity import random_rotation, transform_dual_quaternions, transform_points


@dataclass(frozen=True)
class PairConfig:
    """The `data:` section of config/model/*.yaml.

    input_points: encoder samples per pair; query_points: decoder samples per pair; augment: random
    rotation and scale; rotation: "upright" (turn about up_axis + tilt up to max_tilt_degrees), "so3"
    or "none"; scale_range: isotropic scale after normalisation; pairs_per_instance: pairs per
    instance per epoch; cache_megabytes: LRU budget per process; coverage_points: query points whose
    positions in every pose come with each pair (0 = none); coverage_poses: how many poses, evenly
    spaced over the rest pose and the frames."""

    input_points: int = 1024
    query_points: int = 512
    augment: bool = True
    rotation: str = "upright"
    up_axis: int = 2
    max_tilt_degrees: float = 10.0
    scale_range: tuple = (0.85, 1.15)
    pairs_per_instance: int = 8
    cache_megabytes: float = 4096.0
    coverage_points: int = 0
    coverage_poses: int = 17

    def __post_init__(self):
        object.__setattr__(self, "scale_range", tuple(float(s) for s in self.scale_range))
        if self.rotation not in ("upright", "so3", "none"):
            raise NeurokInputError(f"data rotation {self.rotation!r} is not one of upright, so3, none")
        if self.input_points < 1 or self.query_points < 1 or self.pairs_per_instance < 1:
            raise NeurokInputError("input_points, query_points and pairs_per_instance must be positive")
        if not 0 <= self.coverage_points <= self.query_points or self.coverage_poses < 1:
            raise NeurokInputError("coverage_points must be in [0, query_points] and coverage_poses positive")

    @classmethod
    def from_dict(cls, data: dict | None) -> "PairConfig":
        data = dict(data or {})
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise NeurokInputError(f"unknown data config keys {unknown}")
        return cls(**data)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["scale_range"] = list(self.scale_range)
        return out


def split_files(root: str | Path, split: str, split_file: str | Path | None = None) -> list[str]:
    """Instance file names of `split` from DIR/manifest.json, or from a JSON split file (the output of
    `neurok data split`: {"train": [...], ...}, or a manifest with a "splits" entry)."""
    source = Path(split_file) if split_file else Path(root) / "manifest.json"
    if not source.is_file():
        raise NeurokInputError(f"no split information: {source} does not exist")
    data = json.loads(source.read_text())
    splits = data.get("splits", data)
    if split not in splits:
        raise NeurokInputError(f"{source}: no split {split!r} (has {sorted(splits)})")
    return list(splits[split])


def pair_similarity(positions_a: np.ndarray, rng: np.random.Generator, config: PairConfig,
                    augment: bool) -> tuple[np.ndarray, float, np.ndarray]:
    """(R, s, shift) of the similarity for a pair whose M0 has vertices positions_a (n, 3)."""
    R = np.eye(3)
    if augment:
        R = random_rotation(rng, config.rotation, config.up_axis, config.max_tilt_degrees)
    normaliser = NormalisingTransform.from_vertices(positions_a @ R.T)
    s = normaliser.scale * (rng.uniform(*config.scale_range) if augment else 1.0)
    return R, s, -s * normaliser.centre


def make_pair(poses: PoseSequence, a: int, b: int, rng: np.random.Generator, config: PairConfig,
              augment: bool | None = None) -> dict[str, np.ndarray]:
    """One training pair from poses a (M0) and b of an instance; see the module docstring."""
    augment = config.augment if augment is None else augment
    Va = poses.positions[a].astype(np.float64)
    count = config.input_points + config.query_points
    samples = sample_surface(Va, poses.faces, count, rng)
    corners = poses.faces[samples.face_ids]  # (S, 3)
    used, corner_index = np.unique(corners, return_inverse=True)  # only the vertices the samples touch
    dq_a = poses.dual_quaternions[a][used].astype(np.float64)
    dq_b = poses.dual_quaternions[b][used].astype(np.float64)
    per_vertex = dq.compose(dq_b, dq.inverse(dq_a))  # a -> b, (U, 8)
    relative = dq.blend(per_vertex[corner_index.reshape(corners.shape)], samples.barycentric)  # (S, 8)
    targets = evaluate_samples(poses.positions[b].astype(np.float64), poses.faces, samples.face_ids,
                               samples.barycentric)
    R, s, shift = pair_similarity(Va, rng, config, augment)
    points = transform_points(samples.points, R, s, shift).astype(np.float32)
    targets = transform_points(targets, R, s, shift).astype(np.float32)
    relative = transform_dual_quaternions(relative, R, s, shift).astype(np.float32)
    n = config.input_points
    item = {
        "points": points[:n], "input_dual_quaternions": relative[:n], "input_targets": targets[:n],
        "query_points": points[n:], "target_dual_quaternions": relative[n:], "target_positions": targets[n:],
        "pose_a": a, "pose_b": b,
    }
    if config.coverage_points:
        chosen = slice(n, n + config.coverage_points)
        pose_ids = np.linspace(0, poses.num_poses - 1, config.coverage_poses).round().astype(int)
        in_poses = evaluate_samples(poses.positions[pose_ids].astype(np.float64), poses.faces,
                                    samples.face_ids[chosen], samples.barycentric[chosen])
        item["pose_positions"] = transform_points(in_poses, R, s, shift).astype(np.float32)
    return item


class PairDataset(Dataset):
    """Random pairs from the instances of one split; deterministic per (seed, epoch, index).

    Index space: the sampler passes global ids epoch * len(self) + i, so each epoch draws fresh
    poses and samples while DataLoader workers can stay alive between epochs. Item i uses instance
    i // pairs_per_instance."""

    def __init__(self, root: str | Path, split: str, config: PairConfig, seed: int = 0,
                 split_file: str | Path | None = None, augment: bool | None = None,
                 files: list[str] | None = None):
        self.root = Path(root)
        self.files = list(files) if files is not None else split_files(root, split, split_file)
        missing = [f for f in self.files if not (self.root / f).is_file()]
        if missing:
            raise NeurokInputError(f"{self.root}: {len(missing)} instance files of split {split!r} are "
                                   f"missing, e.g. {missing[0]}")
        self.config = config
        self.seed = int(seed)
        self.augment = config.augment if augment is None else augment
        self.cache = InstanceCache(config.cache_megabytes)

    def __len__(self) -> int:
        return len(self.files) * self.config.pairs_per_instance

    def __getitem__(self, global_id: int) -> dict:
        epoch, i = divmod(int(global_id), len(self))
        instance = i // self.config.pairs_per_instance
        rng = np.random.default_rng([self.seed, epoch, i])
        poses = self.cache.get(self.root / self.files[instance])
        a, b = (int(p) for p in rng.integers(0, poses.num_poses, size=2))
        item = make_pair(poses, a, b, rng, self.config, self.augment)
        item["instance"] = instance
        return item


def encoder_deformation(batch: dict[str, torch.Tensor], output: str) -> torch.Tensor:
    """The deformation E_vae sees: (B, N, 8) dual quaternions or (B, N, 3) displacements."""
    if output == "dual_quaternion":
        return batch["input_dual_quaternions"]
    return batch["input_targets"] - batch["points"]
