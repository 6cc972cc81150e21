"""A NeuROK instance: one static mesh encoded by the model, with its active subspace (docs/architecture.md §6-7).

    instance = encode_mesh(model, vertices, faces)
    instance.decode(q)   # (n, 3) float64, the input mesh's frame, units and vertex order

Generalised coordinates: z = z_rest + A q, where z_rest is the posterior mean of "no deformation"
(so q = 0 is the input pose itself, the natural initial state of a simulation) and A (k, k_q) is
the active subspace of the prior N(mu, I) (docs/architecture.md §7).

Rest anchoring (EncodingConfig.anchor_rest, on by default): the decoder reproduces the input pose
at z_rest only approximately (about 1-2% of the object's size). Each point's deformation is
therefore taken relative to its decoded rest transform, T(z) o T(z_rest)^-1 (dual quaternions; for
a displacement model d(z) - d(z_rest)), so decode(q = 0) is the input mesh exactly and every other
pose keeps the input's detail instead of the decoder's reconstruction error.

Prior draws (sample_latents: `neurok sample`): when the checkpoint carries a posterior bank
(neurok_ros/model/posterior_bank.py), z = z_rest + the latent offset of a training pose of one of the
nearest training shapes; without one, z ~ N(mu, I). The active subspace and the IK's starts keep the
N(mu, I) draws of docs/architecture.md §7 (bank draws there were measured no better: docs/model.md).

Everything inside works in the mesh's normalised frame (bounding-box centre at 0, longest side 1);
decode maps back. The decoder's query points are independent of each other, so the mesh vertices
themselves are decoded (no vertex driving needed for the output).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.surface_sampling import SurfaceSamples, sample_surface
from neurok_ros.kinematics.active_subspace import Subspace, active_subspace, gaussian_draws, whole_space
from neurok_ros.kinematics.pose_space import projected_prior_draws
from neurok_ros.model.conditional_vae import NeuROKModel, apply_deformation
from neurok_ros.model.deformation_decoder import QueryCache
from neurok_ros.model.posterior_bank import bank_draws

DEFAULT_CHECKPOINT = Path(__file__).resolve().parents[1] / "assets" / "neurok_default.pt"
SHIPPED_HEAD = DEFAULT_CHECKPOINT.parent / "neurok_articulation_head.pt"  # trained on DEFAULT_CHECKPOINT
DECODE_CHUNK = 16384  # query points per decoder call when decoding a whole mesh


@dataclass(frozen=True)
class EncodingConfig:
    """input_points: surface samples E_cond sees; subspace_points: query samples of G(z);
    subspace_samples: z samples for C; explained_variance / max_coords: choice of k_q;
    reduce: False keeps the whole latent space (A = I, k_q = k; the "no active subspace" ablation);
    anchor_rest: deformations relative to the decoded rest pose (module docstring);
    posterior_bank: draw from the checkpoint's posterior bank when it has one (module docstring)."""

    input_points: int = 1024
    subspace_points: int = 512
    subspace_samples: int = 64
    explained_variance: float = 0.99
    max_coords: int = 16
    reduce: bool = True
    anchor_rest: bool = True
    posterior_bank: bool = True
    seed: int = 0


@dataclass
class Queries:
    """Decoder queries at normalised points: cache (the model's QueryCache); rest: per point, the
    inverse of the rest-latent dual quaternion (1, N, 8), or the rest displacement (1, N, 3) for a
    displacement model; None when not rest-anchored."""

    cache: QueryCache
    rest: torch.Tensor | None

    @property
    def points(self) -> torch.Tensor:
        """(1, N, 3) normalised frame."""
        return self.cache.points


@torch.no_grad()
def prepare_queries(model: NeuROKModel, points: torch.Tensor, shape_tokens: torch.Tensor,
                    rest_latent: torch.Tensor | None) -> Queries:
    """Queries for normalised points (N, 3); rest-anchored at rest_latent (k,) unless it is None."""
    cache = model.prepare_queries(points)
    if rest_latent is None:
        return Queries(cache, None)
    rest = model.decode(rest_latent.reshape(1, -1), shape_context=shape_tokens, query_cache=cache)
    return Queries(cache, dq.inverse(rest) if model.output == "dual_quaternion" else rest)


@dataclass
class NeuROKInstance:
    """vertices (n, 3) float64 and faces (m, 3) int64: the input mesh, its own frame and units;
    transform: input frame -> normalised frame; prior_mean (k,); shape_tokens (1, K, W);
    rest_latent (k,): E_vae's mean for "no deformation", the z that decodes to the input pose itself;
    subspace_source: A (k, k_q), or what computes it (see `subspace`); vertex_queries: decoder
    queries at the normalised vertices; anchored: whether deformations are relative to the decoded
    rest pose; motion_offsets (E, k): the posterior bank's offsets of the nearest training shapes,
    or None (no bank: the prior is N(mu, I))."""

    model: NeuROKModel
    vertices: np.ndarray
    faces: np.ndarray
    transform: NormalisingTransform
    prior_mean: torch.Tensor
    shape_tokens: torch.Tensor
    rest_latent: torch.Tensor
    subspace_source: Subspace | Callable[[], Subspace]
    vertex_queries: list[Queries]
    seconds: float
    anchored: bool = True
    motion_offsets: torch.Tensor | None = None

    @property
    def subspace(self) -> Subspace:
        """The active subspace A (k, k_q), computed on first use: the joints chart and the readout
        never need it, the latent chart, sampling and the IK do."""
        if callable(self.subspace_source):
            self.subspace_source = self.subspace_source()
        return self.subspace_source

    @property
    def k(self) -> int:
        return int(self.prior_mean.numel())

    @property
    def k_q(self) -> int:
        return self.subspace.num_coords

    @property
    def device(self) -> torch.device:
        return self.prior_mean.device

    def latent(self, q: torch.Tensor) -> torch.Tensor:
        """q (..., k_q) -> z (..., k) = z_rest + A q."""
        return self.rest_latent + q @ self.subspace.basis.T

    def coordinates(self, z: torch.Tensor) -> torch.Tensor:
        """z (..., k) -> q (..., k_q), the projection A^T (z - z_rest)."""
        return (z - self.rest_latent) @ self.subspace.basis

    def prior_draws(self, count: int, seed: int = 0) -> torch.Tensor:
        """(count, k): the prior mean, then N(mu, I) draws, projected on the subspace (the IK's
        candidate starts besides z_rest, pose_space.projected_prior_draws)."""
        return projected_prior_draws(self, count, seed)

    def sample_latents(self, count: int, seed: int = 0, temperature: float = 1.0) -> torch.Tensor:
        """count draws from the prior, (count, k): z = z_rest + temperature * offset, offsets drawn
        from motion_offsets when there is a posterior bank; else z ~ N(mu, temperature^2 I)."""
        if self.motion_offsets is not None:
            return bank_draws(self.motion_offsets, self.rest_latent, count, seed, temperature)
        return self.prior_mean + temperature * gaussian_draws(torch.zeros_like(self.prior_mean), count, seed)

    def surface_samples(self, count: int, seed: int = 0) -> tuple[SurfaceSamples, torch.Tensor]:
        """Area-uniform samples of the input mesh and their normalised points (count, 3) on device."""
        samples = sample_surface(self.vertices, self.faces, count, np.random.default_rng(seed))
        points = torch.as_tensor(self.transform.apply(samples.points), dtype=self.prior_mean.dtype)
        return samples, points.to(self.device)

    def query_cache(self, points: torch.Tensor) -> Queries:
        """Decoder queries for normalised points (N, 3); reuse them across decodes."""
        return prepare_queries(self.model, points, self.shape_tokens, self.rest_latent if self.anchored else None)

    def deformations(self, z: torch.Tensor, queries: Queries) -> torch.Tensor:
        """Per-point deformation (B, N, 8) unit dual quaternions or (B, N, 3) displacements of the
        queried points for latents z (B, k), relative to the rest pose when anchored."""
        prediction = self.model.decode(z, shape_context=self.shape_tokens, query_cache=queries.cache)
        if queries.rest is None:
            return prediction
        if self.model.output == "dual_quaternion":
            return dq.compose(prediction, queries.rest)
        return prediction - queries.rest

    def positions(self, z: torch.Tensor, queries: Queries) -> torch.Tensor:
        """Deformed normalised positions (B, N, 3) of the queried points for latents z (B, k);
        differentiable in z."""
        return apply_deformation(self.deformations(z, queries), queries.points, self.model.output)

    @torch.no_grad()
    def decode(self, q=None, z=None) -> np.ndarray:
        """Mesh vertices (n, 3), or (B, n, 3) for a batch, float64 in the input mesh's frame, units
        and vertex order, for coordinates q (k_q,) / (B, k_q) or latents z (k,) / (B, k); neither:
        q = 0, the input pose as the model reproduces it."""
        if z is None:
            q = torch.zeros(self.k_q) if q is None else torch.as_tensor(q)
            z = self.latent(q.to(self.device, self.prior_mean.dtype))
        z = torch.as_tensor(z).to(self.device, self.prior_mean.dtype)
        single = z.dim() == 1
        z = z.reshape(-1, self.k)
        parts = [self.positions(z, cache) for cache in self.vertex_queries]
        out = self.transform.invert(torch.cat(parts, dim=1).double().cpu().numpy())
        return out[0] if single else out


def encode_mesh(model: NeuROKModel, vertices, faces, config: EncodingConfig = EncodingConfig()) -> NeuROKInstance:
    """Encode a static mesh: prior mean, shape tokens, rest latent and decoder queries now, the active
    subspace on first use; vertices (n, 3) in any frame and units, faces (m, 3). Raises MeshError for
    an invalid mesh."""
    started = time.perf_counter()
    V, F = validate_mesh_arrays(vertices, faces)
    transform = NormalisingTransform.from_vertices(V)
    device = next(model.parameters()).device
    rng = np.random.default_rng(config.seed)
    with torch.no_grad():
        inputs = sample_surface(V, F, config.input_points, rng).points
        inputs = torch.as_tensor(transform.apply(inputs), dtype=torch.float32, device=device)[None]
        prior_mean, shape_tokens = model.encode_prior(inputs)
        rest_latent, _ = model.encode_posterior(inputs, no_deformation(inputs, model.output))
        normalised = torch.as_tensor(transform.apply(V), dtype=torch.float32, device=device)
        anchor = rest_latent.reshape(-1) if config.anchor_rest else None
        vertex_queries = [prepare_queries(model, normalised[i:i + DECODE_CHUNK], shape_tokens, anchor)
                          for i in range(0, len(normalised), DECODE_CHUNK)]
    mean = prior_mean.reshape(-1)
    bank = model.posterior_bank if config.posterior_bank else None
    offsets = bank.nearest_offsets(mean) if bank is not None else None
    if config.reduce:
        probe = torch.as_tensor(transform.apply(sample_surface(V, F, config.subspace_points, rng).points),
                                dtype=torch.float32, device=device)
        with torch.no_grad():
            probe_cache = model.prepare_queries(probe)

        def deformation_norm(z: torch.Tensor) -> torch.Tensor:
            moved = apply_deformation(model.decode(z, shape_context=shape_tokens, query_cache=probe_cache),
                                      probe_cache.points, model.output)
            return (moved - probe_cache.points).flatten(1).norm(dim=1)

        draws = gaussian_draws(mean.detach(), config.subspace_samples, config.seed)

        def subspace() -> Subspace:
            with torch.enable_grad():  # first use may come inside a no_grad decode
                return active_subspace(deformation_norm, draws, config.explained_variance, config.max_coords)
    else:
        subspace = whole_space(mean.numel(), mean.dtype, device)
    return NeuROKInstance(model, V, F, transform, mean.detach(), shape_tokens.detach(),
                          rest_latent.reshape(-1), subspace, vertex_queries, time.perf_counter() - started,
                          config.anchor_rest, offsets)


def no_deformation(points: torch.Tensor, output: str) -> torch.Tensor:
    """The identity deformation of points (B, N, 3): unit dual quaternions (B, N, 8) or zero
    displacements (B, N, 3)."""
    if output == "dual_quaternion":
        identity = torch.zeros(*points.shape[:-1], 8, dtype=points.dtype, device=points.device)
        identity[..., 0] = 1.0
        return identity
    return torch.zeros_like(points)


def load_default_model(checkpoint: str | Path | None = None, device: str = "cpu") -> tuple[NeuROKModel, dict]:
    """(model in eval mode, checkpoint dict) from `checkpoint` or the shipped default. The shipped
    model carries the file of the articulation head trained on it (`articulation_head_file`, a plain
    attribute: the head is no part of the model's parameters), which readouts use by default."""
    from neurok_ros.model.checkpoint import load_model

    path = Path(checkpoint or DEFAULT_CHECKPOINT)
    model, payload = load_model(path, device=resolve_device(device))
    if path.resolve() == DEFAULT_CHECKPOINT and SHIPPED_HEAD.is_file():
        model.articulation_head_file = SHIPPED_HEAD
    return model, payload


def resolve_device(device: str = "auto") -> torch.device:
    """"auto" -> cuda when available, else cpu; anything else as torch understands it."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)
