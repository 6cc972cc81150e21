"""Baseline: a linear (PCA) subspace of training displacements, fitted to a target with the same kind
of IK as NeuROK.

To be defined on unseen meshes, a displacement field lives on a fixed regular grid of the normalised
frame rather than on any mesh's vertices:
- Subspace: for each of `num_pairs` training pairs (instance, distinct poses a -> b, seeded), normalise
  by M0 = pose a's bounding box (as everywhere else), sample M0's surface area-uniformly, move the
  samples to pose b (same face and barycentrics), and splat their displacements onto the grid (each node:
  inverse-distance weights of its k nearest samples). One vector of 3 R^3 numbers per pair; PCA keeps
  the mean and d components. Coefficients c are in units of each component's standard deviation over
  the training vectors, so c ~ N(0, I) is a typical training displacement.
- Fit: the displacement at a point p of the SOURCE's normalised frame is the trilinear interpolation of
  (mean + components^T (std * c)) at p. Adam on c minimises Chamfer-L2 (the IK's own chamfer_l2) between
  the displaced SOURCE samples and the TARGET samples, plus 1/2 w |c|^2, from several starts (c = 0,
  the c closest to no displacement, and draws from N(0, I)); the best start is refined with a smaller
  step. Then SOURCE's vertices are displaced by the fitted field.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from neurok_ros.errors import NeurokInputError
from neurok_ros.evaluation.grid_field import RegularGrid, splat_inverse_distance, trilinear
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.rigid_pieces import RigidPieces, rigidity_residual
from neurok_ros.geometry.surface_sampling import evaluate_samples, sample_surface
from neurok_ros.kinematics.inverse_kinematics import IKConfig, adam_on_rows, chamfer_l2, sample_set_seeds
from neurok_ros.kinematics.piece_registration import register_pieces

CACHE_FORMAT = "neurok-pca-subspace-1"


@dataclass(frozen=True)
class PCAConfig:
    """num_pairs: training pairs; components: d; resolution / extent: grid R^3 over [-extent, extent]^3;
    neighbours: k of the inverse-distance splatting; samples: M0 surface samples per pair; seed."""

    num_pairs: int = 2048
    components: int = 16
    resolution: int = 8
    extent: float = 0.6
    neighbours: int = 8
    samples: int = 2048
    seed: int = 0

    @property
    def grid(self) -> RegularGrid:
        return RegularGrid(self.resolution, -self.extent, self.extent)


@dataclass
class PCASubspace:
    """mean (3 R^3,), components (d, 3 R^3) orthonormal rows, std (d,) training standard deviation
    along each component, explained (d,) explained-variance ratios; vectors are node-major
    (node 0 x, y, z, node 1 x, ...). facts: how it was built (config, data, pairs, seconds)."""

    mean: np.ndarray
    components: np.ndarray
    std: np.ndarray
    explained: np.ndarray
    grid: RegularGrid
    facts: dict

    @property
    def dim(self) -> int:
        return len(self.components)

    def node_values(self, coefficients: torch.Tensor | None = None) -> torch.Tensor:
        """Grid displacements (B, R, R, R, 3) for coefficients (B, d); None: the (d + 1) basis fields,
        the mean first, then std_i * component_i."""
        R = self.grid.resolution
        mean = torch.as_tensor(self.mean, dtype=torch.float32)
        basis = torch.as_tensor(self.components * self.std[:, None], dtype=torch.float32)
        if coefficients is None:
            return torch.cat([mean[None], basis]).reshape(-1, R, R, R, 3)
        c = torch.as_tensor(coefficients, dtype=torch.float32).reshape(-1, self.dim)
        return (mean + c @ basis).reshape(-1, R, R, R, 3)

    def coefficients_of(self, field: np.ndarray) -> np.ndarray:
        """(d,) coefficients of the projection of a grid field (3 R^3,) onto the subspace."""
        return (self.components @ (np.asarray(field, dtype=np.float64).ravel() - self.mean)) / self.std

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp.npz")
        np.savez_compressed(tmp, format=np.array(CACHE_FORMAT), mean=self.mean, components=self.components,
                            std=self.std, explained=self.explained,
                            grid=np.array([self.grid.resolution, self.grid.low, self.grid.high]),
                            facts=np.array(json.dumps(self.facts, sort_keys=True)))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "PCASubspace":
        with np.load(path, allow_pickle=False) as data:
            if str(data["format"]) != CACHE_FORMAT:
                raise NeurokInputError(f"{path}: not a {CACHE_FORMAT} file")
            resolution, low, high = (float(v) for v in data["grid"])
            return cls(data["mean"], data["components"], data["std"], data["explained"],
                       RegularGrid(int(resolution), low, high), json.loads(str(data["facts"])))


def pair_displacement_field(positions_a: np.ndarray, positions_b: np.ndarray, faces: np.ndarray,
                            grid: RegularGrid, rng: np.random.Generator, samples: int = 2048,
                            neighbours: int = 8) -> np.ndarray:
    """(R^3, 3) displacement field of pose a -> pose b in a's normalised frame (splatted samples)."""
    transform = NormalisingTransform.from_vertices(positions_a)
    drawn = sample_surface(positions_a, faces, samples, rng)
    moved = evaluate_samples(np.asarray(positions_b, dtype=np.float64), faces, drawn.face_ids, drawn.barycentric)
    start = transform.apply(drawn.points)
    return splat_inverse_distance(grid, start, transform.apply(moved) - start, neighbours)


def fit_pca_subspace(root: str | Path, train_files: list[str], config: PCAConfig = PCAConfig(),
                     progress: bool = False) -> PCASubspace:
    """Build the subspace from `config.num_pairs` seeded pairs of the training instances in `root`."""
    from neurok_ros.training.instance_cache import InstanceCache

    if not train_files:
        raise NeurokInputError("the PCA baseline needs training instances, the train split is empty")
    started = time.perf_counter()
    root = Path(root)
    files = sorted(train_files)
    rng = np.random.default_rng([config.seed, 0x9CA])
    order = rng.permutation(len(files))
    cache = InstanceCache(1024)
    grid = config.grid
    vectors = np.empty((config.num_pairs, grid.num_nodes * 3))
    pairs = range(config.num_pairs)
    if progress:
        from tqdm import tqdm
        pairs = tqdm(pairs, desc="PCA baseline: training displacements", unit="pair", leave=False)
    for p in pairs:
        poses = cache.get(root / files[order[p % len(files)]])
        a, b = (int(i) for i in rng.choice(poses.num_poses, size=2, replace=False))
        vectors[p] = pair_displacement_field(poses.positions[a], poses.positions[b], poses.faces, grid, rng,
                                             config.samples, config.neighbours).ravel()
    mean = vectors.mean(axis=0)
    _, singular, vt = np.linalg.svd(vectors - mean, full_matrices=False)
    d = min(config.components, len(singular))
    variance = singular ** 2
    std = singular[:d] / np.sqrt(max(1, config.num_pairs - 1))
    facts = {"config": asdict(config), "train_instances": len(files), "root": str(root.resolve()),
             "seconds": round(time.perf_counter() - started, 2),
             "explained_total": float(variance[:d].sum() / max(variance.sum(), 1e-300))}
    return PCASubspace(mean, vt[:d].copy(), np.maximum(std, 1e-12), variance[:d] / max(variance.sum(), 1e-300),
                       grid, facts)


def cache_key(root: str | Path, train_files: list[str], config: PCAConfig) -> str:
    """A short hash of what the subspace depends on: the dataset's manifest facts, the training file
    names and the config."""
    root = Path(root).resolve()
    manifest = {}
    if (root / "manifest.json").is_file():
        data = json.loads((root / "manifest.json").read_text())
        manifest = {k: data.get(k) for k in ("dataset_version", "seed", "frames")}
    text = json.dumps({"root": str(root), "manifest": manifest, "train": sorted(train_files),
                       "config": asdict(config), "format": CACHE_FORMAT}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_or_fit_subspace(root: str | Path, train_files: list[str], config: PCAConfig, cache_dir: str | Path | None,
                         progress: bool = False) -> tuple[PCASubspace, Path | None, bool]:
    """(subspace, cache file or None, whether it came from the cache)."""
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"pca_{Path(root).resolve().name}_{cache_key(root, train_files, config)}.npz"
        if path.is_file():
            try:
                return PCASubspace.load(path), path, True
            except (OSError, KeyError, ValueError):
                pass  # a damaged cache is rebuilt
    subspace = fit_pca_subspace(root, train_files, config, progress)
    if path is not None:
        subspace.save(path)
    return subspace, path, False


@dataclass(frozen=True)
class PCAFitConfig:
    """Mirrors IKConfig: points: SOURCE samples; starts; steps of the batched stage at `rate`, then
    refine_steps on the best start at refine_rate; prior_weight: 1/2 w |c|^2; partial: one-sided
    Chamfer from the observed points (a partial observation); sample_sets: SOURCE sample sets, the next
    at each objective evaluation (as in fit_pose); rigid_pieces, rigidity_weight: a multi-piece SOURCE
    is fitted as rigid pieces (as in fit_pose: the pieces' rigidity residual in the objective, the
    displaced vertices projected on each piece's best rigid motion); piece_steps, piece_tolerance,
    piece_links, piece_link_tolerance: then each group of pieces registered on the observation and
    assigned its link's motion (as in fit_pose); keep, prune_after: only the keep best starts go on
    after prune_after steps of the batched stage (0: all; as in fit_pose); seed."""

    points: int = 512
    starts: int = 8
    steps: int = 60
    refine_steps: int = 30
    rate: float = 0.15
    refine_rate: float = 0.03
    prior_weight: float = 1e-4
    partial: bool = False
    sample_sets: int = 1
    rigid_pieces: bool = False
    rigidity_weight: float = 0.0
    piece_steps: int = 0
    piece_tolerance: float = 0.01
    piece_links: bool = False
    piece_link_tolerance: float = 0.01
    keep: int = 0
    prune_after: int = 10
    seed: int = 0

    @classmethod
    def from_ik(cls, ik: IKConfig) -> "PCAFitConfig":
        """The same budget as NeuROK's IK: points, starts, steps, step sizes (in std units), prior weight;
        and the same objective (one-sided Chamfer for a partial observation)."""
        return cls(ik.points, ik.starts, ik.q_steps, ik.z_steps, ik.q_rate, ik.z_rate, ik.prior_weight, ik.partial,
                   ik.sample_sets, ik.rigid_pieces, ik.rigidity_weight, ik.piece_steps,
                   ik.piece_tolerance, ik.piece_links, ik.piece_link_tolerance, ik.q_keep, ik.q_prune_after, ik.seed)


@dataclass
class PCAFit:
    """coefficients (d,); vertices (n, 3) of SOURCE displaced, its frame and units; loss; start_losses."""

    coefficients: np.ndarray
    vertices: np.ndarray
    loss: float
    start_losses: np.ndarray
    seconds: float


def fit_pca_pose(subspace: PCASubspace, vertices: np.ndarray, faces: np.ndarray, target_points: np.ndarray,
                 config: PCAFitConfig = PCAFitConfig()) -> PCAFit:
    """Fit coefficients so that SOURCE (vertices (n, 3), faces) displaced by the subspace field matches
    target_points (M, 3), both in SOURCE's frame and units; returns the displaced vertices."""
    started = time.perf_counter()
    V = np.asarray(vertices, dtype=np.float64)
    transform = NormalisingTransform.from_vertices(V)
    target = torch.as_tensor(transform.apply(np.asarray(target_points, dtype=np.float64)), dtype=torch.float32)
    fields = subspace.node_values()  # the mean and the scaled components on the grid
    pieces = RigidPieces.of_mesh(V, faces) if config.rigid_pieces else None
    sets = []  # per sample set (samples (N, 3), field basis at them (d + 1, N, 3), pieces), as in fit_pose
    for seed in sample_set_seeds(config.seed, config.sample_sets):
        drawn = sample_surface(V, faces, config.points, np.random.default_rng(seed))
        samples = torch.as_tensor(transform.apply(drawn.points), dtype=torch.float32)
        piece_of = None if pieces is None else pieces.sample_labels(faces, drawn.face_ids)
        sets.append((samples, trilinear(fields, samples, subspace.grid), piece_of))
    sample_sets = itertools.cycle(sets)

    def objective(c: torch.Tensor) -> torch.Tensor:
        samples, basis, piece_of = next(sample_sets)
        moved = samples + basis[0] + torch.einsum("bd,dnc->bnc", c, basis[1:])
        loss = chamfer_l2(moved, target, config.partial) + 0.5 * config.prior_weight * c.square().sum(1)
        if piece_of is not None and config.rigidity_weight > 0:
            loss = loss + config.rigidity_weight * rigidity_residual(samples, moved, piece_of)
        return loss

    generator = torch.Generator().manual_seed(config.seed)
    starts = torch.randn(max(2, config.starts), subspace.dim, generator=generator)
    starts[0] = 0.0
    starts[1] = torch.as_tensor(subspace.coefficients_of(np.zeros_like(subspace.mean)), dtype=torch.float32)
    values, start_losses = adam_on_rows(starts, objective, config.steps, config.rate,
                                        prune=(config.prune_after, config.keep))
    best = int(torch.argmin(start_losses))
    c, loss = values[best:best + 1], start_losses[best:best + 1]
    if config.refine_steps > 0:
        c, loss = adam_on_rows(c, objective, config.refine_steps, config.refine_rate)
    with torch.no_grad():
        normalised = torch.as_tensor(transform.apply(V), dtype=torch.float32)
        moved = normalised + trilinear(subspace.node_values(c), normalised, subspace.grid)[0]
    out = transform.invert(moved.double().numpy())
    if pieces is not None:
        out = pieces.project(V, out)
        if config.piece_steps > 0:
            samples, fresh = (sample_surface(V, faces, 4 * config.points, np.random.default_rng(config.seed + s))
                              for s in (4, 3))
            registered = register_pieces(transform.apply(V), transform.apply(out), faces, pieces, samples, target,
                                         config.piece_steps, config.piece_tolerance, config.partial, fresh=fresh,
                                         links=config.piece_links, link_tolerance=config.piece_link_tolerance)
            out = transform.invert(registered)
    return PCAFit(c[0].detach().numpy().astype(np.float64), out, float(loss[0]), start_losses.numpy(),
                  time.perf_counter() - started)
