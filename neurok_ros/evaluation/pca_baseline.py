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
  (mean + components^T (std * c)) at p. SOURCE displaced so is a pose space with latent c
  (PCAPoseSpace), fitted by NeuROK's own fit_pose with the same IKConfig: Chamfer-L2 between the
  displaced SOURCE samples and the TARGET samples plus 1/2 w |c|^2, from several starts (c = 0, the c
  closest to no displacement, and draws from N(0, I)), the best start refined at the z stage's step;
  then SOURCE's vertices are displaced by the fitted field (its rigid pieces projected and registered
  as NeuROK's are). There is no rest check: c = 0 is not SOURCE.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch

from neurok_ros.errors import NeurokInputError
from neurok_ros.evaluation.grid_field import RegularGrid, splat_inverse_distance, trilinear
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.surface_sampling import SurfaceSamples, evaluate_samples, sample_surface
from neurok_ros.kinematics.active_subspace import whole_space
from neurok_ros.kinematics.ik_config import IKConfig
from neurok_ros.kinematics.inverse_kinematics import fit_pose

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


class PCAPoseSpace:
    """SOURCE (vertices (n, 3), faces (m, 3)) displaced by a subspace's field, as a pose space for
    fit_pose (kinematics/pose_space.py): the latent is the coefficient vector c (d,) itself (A = I, no
    bank motions), its prior N(0, I); the first start is c = 0, the next the c closest to no displacement,
    then draws from N(0, I). c = 0 is the mean displacement, not SOURCE, so its fits skip the rest check."""

    motion_offsets = None
    device = torch.device("cpu")

    def __init__(self, subspace: PCASubspace, vertices: np.ndarray, faces: np.ndarray):
        self.pca = subspace
        self.vertices = np.asarray(vertices, dtype=np.float64)
        self.faces = np.asarray(faces)
        self.transform = NormalisingTransform.from_vertices(self.vertices)
        self.fields = subspace.node_values()  # the mean and the scaled components on the grid
        self.prior_mean = torch.zeros(subspace.dim)
        self.rest_latent = torch.zeros(subspace.dim)
        self.subspace = whole_space(subspace.dim, torch.float32)

    @property
    def k(self) -> int:
        return self.pca.dim

    @property
    def k_q(self) -> int:
        return self.pca.dim

    def coordinates(self, z: torch.Tensor) -> torch.Tensor:
        return z

    def prior_draws(self, count: int, seed: int) -> torch.Tensor:
        """(count, d): the c closest to no displacement, then rows 2.. of a seeded (count + 1, d) draw
        from N(0, I) (rows 0 and 1 stand for c = 0, the fit's first start, and that c)."""
        draws = torch.randn(count + 1, self.k, generator=torch.Generator().manual_seed(seed))[1:]
        draws[0] = torch.as_tensor(self.pca.coefficients_of(np.zeros_like(self.pca.mean)), dtype=torch.float32)
        return draws

    def surface_samples(self, count: int, seed: int = 0) -> tuple[SurfaceSamples, torch.Tensor]:
        samples = sample_surface(self.vertices, self.faces, count, np.random.default_rng(seed))
        return samples, torch.as_tensor(self.transform.apply(samples.points), dtype=torch.float32)

    def query_cache(self, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(points (N, 3), the mean and scaled component fields at them (d + 1, N, 3))."""
        return points, trilinear(self.fields, points, self.pca.grid)

    def positions(self, z: torch.Tensor, queries: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        points, basis = queries
        return points + basis[0] + torch.einsum("bd,dnc->bnc", z, basis[1:])

    def decode(self, q=None, z=None) -> np.ndarray:
        """SOURCE's vertices displaced by the field of coefficients z (d,) (or q: the same coordinates),
        SOURCE's frame and units."""
        with torch.no_grad():
            normalised = torch.as_tensor(self.transform.apply(self.vertices), dtype=torch.float32)
            moved = normalised + trilinear(self.pca.node_values(q if z is None else z), normalised, self.pca.grid)[0]
        return self.transform.invert(moved.double().numpy())


@dataclass
class PCAFit:
    """coefficients (d,); vertices (n, 3) of SOURCE displaced, its frame and units; loss; start_losses."""

    coefficients: np.ndarray
    vertices: np.ndarray
    loss: float
    start_losses: np.ndarray
    seconds: float


def fit_pca_pose(subspace: PCASubspace, vertices: np.ndarray, faces: np.ndarray, target_points: np.ndarray,
                 config: IKConfig = IKConfig()) -> PCAFit:
    """Fit coefficients so that SOURCE (vertices (n, 3), faces) displaced by the subspace field matches
    target_points (M, 3), both in SOURCE's frame and units, with fit_pose and `config` as NeuROK's IK
    (q stage in c, then the z stage in c again; no rest check); returns the displaced vertices."""
    space = PCAPoseSpace(subspace, vertices, faces)
    target = space.transform.apply(np.asarray(target_points, dtype=np.float64))
    result = fit_pose(space, target, replace(config, rest_check=False))
    return PCAFit(result.z.numpy().astype(np.float64), result.vertices, result.loss, result.start_losses.numpy(),
                  result.seconds)
