"""Inverse kinematics in the learned space: find q (then z) whose decoded shape matches an observation.

The observation is a point set (a scan, or samples of a target mesh): no correspondence with the
source is used. Objective: symmetric Chamfer-L2 between decoded surface samples of the source and
the observed points, plus a small prior term 1/2 w |z - mu|^2 (w = 1e-6: N(mu, I) is not where the
data's motions lie, docs/model.md, and a larger w pulls every fit back towards mu).

Each evaluation of the objective decodes the next of `sample_sets` seeded sets of source samples
(sample_set_seeds). With one fixed set, Adam fits that set's sampling pattern against the observed
points' pattern: on hinged test objects the fit could score lower, on its own samples, than the pose
the model reaches with the true correspondence, and still be much further from the true pose
(docs/model.md, "Fresh samples at every step"). Fresh samples leave only what every sampling agrees on.

Starts (start_latents): q = 0, the input pose, always; then the best, by the objective, of the prior
mean, draws z ~ N(mu, I) projected on the subspace and, when the checkpoint carries a posterior bank,
the motions z_rest + offset of the nearest training shapes. The decoder is flat at z_rest, so a real
motion is reached from a bank motion near it, not from q = 0 (test split: door IoU 0.37 -> 0.64).
The chosen starts run as one batch of Adam in q, in the span of the subspace and the bank motions
(span_with); after q_prune_after steps only the q_keep best go on (the same fits within noise on
40 val pairs in 29 % less time, docs/model.md, "Pruned starts"); the best is then refined in the
full latent space z.

Last, the fit must beat the input pose itself (q = 0, which decodes to SOURCE exactly) on a
measure that sampling noise cannot fool (`surface_error`: the observed points' squared distance to
the decoded mesh surface, plus fresh decoded samples' squared distance to the observed points).
Chamfer between two samplings of the same surface is not zero, and the fit would otherwise chase
that noise and move a shape the observation shows at rest.

When the subspace fit loses to the input pose although the observation differs from it (its error
is more than 1.5 times what another sampling of SOURCE would score), the fit runs once more in the
full latent space (A = I, full_space_fallback): a pose the subspace does not reach may still be in
the model.

Rigid pieces (rigid_pieces, geometry/rigid_pieces.py): a mesh made of several connected pieces is
an assembly of rigid parts. The objective then adds rigidity_weight times the pieces' rigidity
residual (how far the decoded samples are from moving each piece rigidly), and the fit's vertices
are the decoded ones with every piece moved by its best rigid motion. A decoded pose leaks a little
of each moving part's motion into the parts beside it; on a thin-walled box that bend alone costs
more IoU than the lid's error (docs/model.md, "Rigid pieces"). A single-piece mesh (a scan, a soft
body, a cloth) is fitted as before.

Piece registration (piece_steps > 0; on by default, measured in docs/model.md,
"Piece registration"): after the fit, the groups of pieces the fit moves alike are each moved by the rigid
motion that best matches the observed points (kinematics/piece_registration.py), and that is kept
when it lowers the surface error. The decoder's pose error (a lid a few degrees short) is then the
observation's to correct, not the model's.

Link assignment (piece_links; on by default, docs/model.md, "Link assignment"): then
every group takes rest, its own motion or another group's, as the observation decides, preferring rest
and shared motions where it cannot tell (kinematics/link_assignment.py): a drawer the decoder tore
into pieces moving different distances moves as one again, and a carcass wall that caught a little of
its motion goes back to rest.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import igl
import numpy as np
import torch

from neurok_ros.geometry.rigid_pieces import RigidPieces, rigidity_residual
from neurok_ros.geometry.surface_sampling import evaluate_samples
from neurok_ros.kinematics.active_subspace import whole_space
from neurok_ros.kinematics.instance import NeuROKInstance


FALLBACK_GAP_RATIO = 1.5  # the observation differs from SOURCE when its surface error exceeds 1.5 gaps


@dataclass(frozen=True)
class IKConfig:
    """points: decoded source samples per start; starts: batch of initial q; q_steps / z_steps: Adam
    iterations in q, then in z (0 skips the refinement); q_rate / z_rate: Adam step sizes;
    prior_weight: w of the prior term 1/2 w |z - mu|^2; rest_check: keep q = 0 unless the fit has a
    lower surface_error (tolerance rest_margin, relative); full_space_fallback: when the input pose
    wins although the observation differs from it (by more than FALLBACK_GAP_RATIO sampling gaps),
    fit again in the whole latent space (A = I) before giving up; bank_starts: when the instance has
    posterior-bank motions, they join the candidate starts and the q stage's basis (start_latents);
    partial: the observation shows part of the surface (one depth view), so the objective is the
    one-sided Chamfer from the observed points and the rest check uses only their distance to the
    decoded surface; trim: the fraction of the observed points farthest from the decoded shape left
    out of the objective's observed-to-decoded term and of the rest check's observed-to-surface term
    (outliers: a gripper or a hand in the view; 0 keeps every point); sample_sets: the objective's
    decoded samples come from this many seeded sets of `points` source samples, the next set at
    each evaluation (1: one fixed set for the whole fit); rigid_pieces: a mesh of several
    connected pieces is fitted as rigid pieces (module docstring), rigidity_weight times their
    rigidity residual (normalised units squared, as the Chamfer term) joining the objective;
    piece_steps, piece_tolerance: ICP steps of the piece registration after the fit (0: none), and
    how far apart (normalised units, RMS) two pieces' fitted motions may move them and still be
    registered as one group; piece_links, piece_link_tolerance: then every group takes rest, its own
    motion or another group's, whichever the observation supports, preferring rest and shared motions
    within that relative surface error (kinematics/link_assignment.py); q_keep, q_prune_after: after
    q_prune_after steps of the q stage only the q_keep starts with the lowest objective so far go on
    (0: all of them; adam_on_rows's prune)."""

    points: int = 1024
    starts: int = 8
    q_steps: int = 40
    z_steps: int = 80  # 80 fit better than 40 on val and test pairs; 160 no better (docs/model.md)
    q_rate: float = 0.15
    z_rate: float = 0.1
    prior_weight: float = 1e-6
    rest_check: bool = True
    rest_margin: float = 0.1
    full_space_fallback: bool = True
    bank_starts: bool = True
    partial: bool = False
    trim: float = 0.0
    sample_sets: int = 16
    rigid_pieces: bool = True  # fit a multi-piece mesh as rigid pieces (docs/model.md, "Rigid pieces")
    rigidity_weight: float = 0.3  # chosen on 40 val pairs among 0.1, 0.3, 1 and 3 (docs/model.md)
    piece_steps: int = 20  # ICP steps of the piece registration; 0: none (+0.029 IoU on 40 val pairs, docs/model.md)
    piece_tolerance: float = 0.01
    piece_links: bool = True  # link assignment after the registration (+0.028 IoU on 40 val pairs, docs/model.md)
    piece_link_tolerance: float = 0.01
    q_keep: int = 2  # starts kept after q_prune_after steps; 0: all (docs/model.md, "Pruned starts")
    q_prune_after: int = 10
    seed: int = 0

    def __post_init__(self):
        if self.q_keep < 0 or self.q_prune_after < 1:
            raise ValueError(f"IKConfig.q_keep must be >= 0 and q_prune_after >= 1, got {self.q_keep}, "
                             f"{self.q_prune_after}")
        if not 0.0 <= self.trim < 1.0:
            raise ValueError(f"IKConfig.trim must be in [0, 1), got {self.trim}")
        if self.sample_sets < 1:
            raise ValueError(f"IKConfig.sample_sets must be at least 1, got {self.sample_sets}")
        if self.piece_steps < 0 or not (math.isfinite(self.piece_tolerance) and self.piece_tolerance >= 0.0):
            raise ValueError(f"IKConfig.piece_steps and piece_tolerance must be >= 0, got {self.piece_steps}, "
                             f"{self.piece_tolerance}")
        if not (math.isfinite(self.piece_link_tolerance) and self.piece_link_tolerance >= 0.0):
            raise ValueError(f"IKConfig.piece_link_tolerance must be a finite number >= 0, got "
                             f"{self.piece_link_tolerance}")
        if not (math.isfinite(self.rigidity_weight) and self.rigidity_weight >= 0.0):
            raise ValueError(f"IKConfig.rigidity_weight must be a finite number >= 0, got {self.rigidity_weight}")


def sample_set_seeds(seed: int, sets: int) -> list[int]:
    """Seeds of the objective's `sets` source sample sets: `seed` itself first (one set is the fixed
    set of earlier fits), then seeds far from those of the rest check and of other fits (seed + 1, ...)."""
    return [seed + 1_000_003 * j for j in range(sets)]


@dataclass
class IKResult:
    """q (k_q,), z (k,): the fit (q = A^T (z - z_rest); z is the fit itself, also when it left the
    subspace in the z refinement or the fallback); loss: its objective; start_losses (starts,) after
    the q stage (a start dropped by q_keep: its best before it was dropped); seconds: wall time of the
    fit; surface_errors: {"fit", "rest", "sampling_gap"} of the rest check (normalised units squared),
    and kept_rest: whether the input pose won it; full_space: whether the returned fit came from the
    full-latent-space fallback; vertices: (n, 3) float64, the fitted
    mesh in the input's frame, units and vertex order (z decoded, then its rigid pieces projected)."""

    q: torch.Tensor
    z: torch.Tensor
    loss: float
    start_losses: torch.Tensor
    seconds: float
    vertices: np.ndarray
    surface_errors: dict | None = None
    kept_rest: bool = False
    full_space: bool = False


def kept_count(count: int, trim: float) -> int:
    """How many of `count` observed points a fit with `trim` keeps: at least one."""
    return max(1, count - int(trim * count))


def trimmed_mean(values: torch.Tensor, trim: float) -> torch.Tensor:
    """Mean over the last axis (..., M) of the kept_count(M, trim) smallest values."""
    if trim <= 0.0:
        return values.mean(-1)
    return torch.topk(values, kept_count(values.shape[-1], trim), dim=-1, largest=False).values.mean(-1)


def surface_error(instance: NeuROKInstance, decoded: np.ndarray, target: np.ndarray, samples,
                  partial: bool = False, trim: float = 0.0) -> float:
    """Mean squared distance (normalised units^2) from the observed points (M, 3, normalised frame) to
    the decoded surface (vertices (n, 3) in the mesh frame, e.g. fitted_vertices), the `trim` fraction
    farthest left out, plus (unless partial: the observation shows part of the surface) that of the
    decoded surface samples (SurfaceSamples of the input mesh, re-evaluated on the decoded vertices)
    to their nearest observed point."""
    return normalised_surface_error(instance.transform.apply(decoded), instance.faces, target, samples, partial, trim)


def normalised_surface_error(vertices: np.ndarray, faces: np.ndarray, target: np.ndarray, samples,
                             partial: bool = False, trim: float = 0.0) -> float:
    """surface_error of vertices (n, 3) already in the normalised frame (faces (m, 3))."""
    faces = np.asarray(faces, dtype=np.int64)
    vertices = np.asarray(vertices, dtype=np.float64)
    to_surface = float(trimmed_mean(torch.as_tensor(igl.point_mesh_squared_distance(target, vertices, faces)[0]), trim))
    if partial:
        return to_surface
    points = evaluate_samples(vertices, faces, samples.face_ids, samples.barycentric)
    to_target = torch.cdist(torch.as_tensor(points), torch.as_tensor(target)).min(dim=1).values.square()
    return to_surface + float(to_target.mean())


def sampling_gap(instance: NeuROKInstance, samples, count: int, seed: int, trim: float = 0.0) -> float:
    """The surface error an observation of SOURCE itself would have: mean squared distance from
    `samples` (SurfaceSamples of the input mesh) to `count` other samples of it (normalised units^2),
    the `trim` fraction farthest left out as in surface_error."""
    _, other = instance.surface_samples(count, seed=seed)
    own = torch.as_tensor(instance.transform.apply(samples.points), dtype=other.dtype).to(other.device)
    return float(trimmed_mean(torch.cdist(own, other).min(dim=1).values.square(), trim))


def nearest_indices(points: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest neighbours, without autograd, between batched point sets (B, N, 3) and one target set
    (M, 3): (B, N) index of each point's nearest target point and (B, M) index of each target point's
    nearest point in its row. On the CPU by k-d trees (8x faster than the (B, N, M) distance matrix
    for 8 x 1024 x 2048, whose argmin over the middle axis is slow; one worker each: these queries are
    small, and starting threads for each cost more than they saved, 1.3x on 2 cores); elsewhere by
    that matrix."""
    if points.device.type != "cpu":
        d = torch.cdist(points.detach(), target.detach().expand(points.shape[0], -1, -1))
        return d.argmin(dim=2), d.argmin(dim=1)
    from scipy.spatial import cKDTree

    rows = points.detach().numpy()
    observed = target.detach().numpy()
    _, to_target = cKDTree(observed).query(rows.reshape(-1, 3), workers=1)
    to_points = np.stack([cKDTree(row).query(observed, workers=1)[1] for row in rows])
    return (torch.from_numpy(to_target.reshape(rows.shape[:2])).to(torch.long),
            torch.from_numpy(to_points).to(torch.long))


def chamfer_l2(points: torch.Tensor, target: torch.Tensor, one_sided: bool = False, trim: float = 0.0) -> torch.Tensor:
    """Symmetric Chamfer-L2 (B,) between batched point sets (B, N, 3) and one target set (M, 3); with
    one_sided, only the target points' mean squared distance to their nearest point (an observation
    of part of the surface says nothing about where the rest of it is). With trim, the target points'
    term averages only the kept_count(M, trim) nearest (per row: outliers of the observation).

    Nearest neighbours are found without autograd (nearest_indices); the loss is then rebuilt from
    the matched pairs, which has the same gradient almost everywhere and avoids back-propagating
    through the (B, N, M) distance matrix (~10x faster on the CPU)."""
    to_target, to_points = nearest_indices(points, target)
    nearest = torch.gather(points, 1, to_points[..., None].expand(-1, -1, 3))
    backward = trimmed_mean((nearest - target).square().sum(-1), trim)
    if one_sided:
        return backward
    forward = (points - target[to_target]).square().sum(-1).mean(1)
    return 0.5 * (forward + backward)


def adam_on_rows(variable: torch.Tensor, objective, steps: int, rate: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 prune: tuple[int, int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Adam on a batch of independent variables (B, d) (objective: (B', d) -> (B',), rows
    independent); returns the best (variable, loss) seen per row. prune (after, keep): after `after`
    steps only the `keep` rows with the lowest loss so far go on, the others keep what they had (the
    objective sees those rows alone from then on); keep 0 prunes nothing. Only the variable's gradient is computed, not that
    of the model weights the objective runs through (docs/model.md: a fit takes 13 % less time);
    works inside torch.no_grad() too. The update is torch.optim.Adam's (test_kinematics checks they
    agree), written out because constructing that optimiser imports torch's compiler stack (1.7 s per
    `neurok ik`)."""
    variable = variable.detach().clone()
    first, second = torch.zeros_like(variable), torch.zeros_like(variable)
    best_value = variable.clone()
    best_loss = None  # (B,), in the objective's dtype
    rows = torch.arange(variable.shape[0], device=variable.device)  # the rows still going on
    for step in range(steps + 1):
        if prune is not None and step == prune[0] > 0 and 0 < prune[1] < len(rows):
            going_on = torch.argsort(best_loss[rows])[:prune[1]]
            rows, variable, first, second = rows[going_on], variable[going_on], first[going_on], second[going_on]
        with torch.enable_grad():
            variable.requires_grad_(True)
            loss = objective(variable)
            gradient = torch.autograd.grad(loss.sum(), variable)[0] if step < steps else None
        with torch.no_grad():
            variable = variable.detach()
            if best_loss is None:
                best_loss = torch.full((len(rows),), float("inf"), dtype=loss.dtype, device=loss.device)
            better = loss < best_loss[rows]
            best_loss[rows[better]] = loss.detach()[better]
            best_value[rows[better]] = variable[better]
            if gradient is None:
                break
            first.mul_(betas[0]).add_(gradient, alpha=1 - betas[0])
            second.mul_(betas[1]).addcmul_(gradient, gradient, value=1 - betas[1])
            denominator = (second.sqrt() / math.sqrt(1 - betas[1] ** (step + 1))).add_(eps)
            variable = variable - (rate / (1 - betas[0] ** (step + 1))) * first / denominator
    return best_value, best_loss


def fitted_vertices(instance: NeuROKInstance, z: torch.Tensor, pieces: RigidPieces | None,
                    registration=None) -> np.ndarray:
    """(n, 3) float64, input frame and units: z (k,) decoded, then (pieces given) each piece projected
    on its best rigid motion from the input pose, then (registration given: fitted vertices (n, 3) ->
    registered ones, piece_registrar) the pieces registered on the observation."""
    decoded = instance.decode(z=z)
    if pieces is None:
        return decoded
    projected = pieces.project(instance.vertices, decoded)
    return projected if registration is None else registration(projected)


def start_latents(instance: NeuROKInstance, motions: torch.Tensor | None, count: int, seed: int,
                  objective) -> torch.Tensor:
    """(max(2, count), k) starting latents: the input pose z_rest first, then the best-scoring (by
    `objective`, (B, k) -> (B,)) of the prior mean, the N(mu, I) draws projected on the subspace and,
    when given, the posterior-bank motions z_rest + offset (motions (E, k)). The decoder is flat at
    z_rest, so a real motion is far easier to reach from a bank motion near it than from q = 0."""
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(max(2, count) - 1, instance.k, generator=generator)
    noise = noise.to(instance.device, instance.prior_mean.dtype)
    noise[0] = 0.0  # the prior mean itself
    draws = instance.latent(instance.coordinates(instance.prior_mean + noise))
    if motions is not None:
        candidates = torch.cat([draws, instance.rest_latent + motions.to(draws)])
        draws = candidates[torch.argsort(objective(candidates))[:len(draws)]]
    return torch.cat([instance.rest_latent[None], draws])


def span_with(basis: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """(k, k_q + r): basis (k, k_q, orthonormal columns) followed by an orthonormal basis of the part
    of span(directions (E, k) rows) that basis does not reach (r <= E)."""
    B = basis.double()
    given = directions.to(B).T
    rest = given - B @ (B.T @ given)
    U, s, _ = torch.linalg.svd(rest, full_matrices=False)
    keep = s > 1e-6 * float(given.norm())  # directions basis already spans add nothing
    return torch.cat([B, U[:, keep]], dim=1).to(basis.dtype)


def piece_registrar(instance: NeuROKInstance, pieces: RigidPieces, target: torch.Tensor, config: IKConfig):
    """The registration fitted_vertices applies for `config`: fitted vertices (n, 3, input frame) ->
    the same with every group of pieces registered on target (M, 3, normalised frame;
    piece_registration.register_pieces from 4 * points samples, judged on as many fresh ones)."""
    from neurok_ros.kinematics.piece_registration import register_pieces

    samples, _ = instance.surface_samples(4 * config.points, seed=config.seed + 4)
    fresh, _ = instance.surface_samples(4 * config.points, seed=config.seed + 3)
    rest = instance.transform.apply(instance.vertices)

    def register(vertices: np.ndarray) -> np.ndarray:
        return instance.transform.invert(register_pieces(
            rest, instance.transform.apply(vertices), instance.faces, pieces, samples, target.cpu(),
            config.piece_steps, config.piece_tolerance, config.partial, config.trim, fresh,
            config.piece_links, config.piece_link_tolerance))
    return register


def fit_pose(instance: NeuROKInstance, target_points: torch.Tensor, config: IKConfig = IKConfig()) -> IKResult:
    """Fit the instance to observed points (M, 3) in its normalised frame (instance.transform.apply of
    the observation in the mesh frame)."""
    started = time.perf_counter()
    target = torch.as_tensor(target_points, dtype=instance.prior_mean.dtype).to(instance.device)
    pieces = RigidPieces.of_mesh(instance.vertices, instance.faces) if config.rigid_pieces else None
    with torch.no_grad():
        drawn = [instance.surface_samples(config.points, seed=s)
                 for s in sample_set_seeds(config.seed, config.sample_sets)]
        caches = [instance.query_cache(points) for _, points in drawn]
    labels = [None if pieces is None else pieces.sample_labels(instance.faces, samples.face_ids).to(instance.device)
              for samples, _ in drawn]
    sample_sets = itertools.cycle([(cache, points, piece_of)
                                   for cache, (_, points), piece_of in zip(caches, drawn, labels)])
    w = config.prior_weight

    def objective(z: torch.Tensor) -> torch.Tensor:
        prior = 0.5 * w * (z - instance.prior_mean).square().sum(1)
        cache, rest_points, piece_of = next(sample_sets)
        moved = instance.positions(z, cache)
        loss = chamfer_l2(moved, target, config.partial, config.trim) + prior
        if piece_of is not None and config.rigidity_weight > 0:
            loss = loss + config.rigidity_weight * rigidity_residual(rest_points, moved, piece_of)
        return loss

    motions = instance.motion_offsets if config.bank_starts else None
    with torch.no_grad():
        start_offsets = start_latents(instance, motions, config.starts, config.seed, objective) - instance.rest_latent
    basis = instance.subspace.basis if motions is None else span_with(instance.subspace.basis, motions)
    registration = None
    if pieces is not None and config.piece_steps > 0:
        registration = piece_registrar(instance, pieces, target, config)

    def fit_in(basis: torch.Tensor, z_steps: int):
        """Adam from every start in z = z_rest + basis q, then z_steps in z: (z (k,), loss (1,), start losses)."""
        def q_objective(q: torch.Tensor) -> torch.Tensor:
            return objective(instance.rest_latent + q @ basis.T)

        q_all, start_losses = adam_on_rows(start_offsets @ basis, q_objective, config.q_steps, config.q_rate,
                                           prune=(config.q_prune_after, config.q_keep))
        best = int(torch.argmin(start_losses))
        z = (instance.rest_latent + q_all[best:best + 1] @ basis.T).detach()
        loss = start_losses[best:best + 1]
        if z_steps > 0:
            z, loss = adam_on_rows(z, objective, z_steps, config.z_rate)
        return z[0].detach(), loss, start_losses

    z, loss, start_losses = fit_in(basis, config.z_steps)
    vertices = fitted_vertices(instance, z, pieces, registration)
    errors, kept_rest, full_space = None, False, False
    if config.rest_check:
        observed = target.double().cpu().numpy()
        fresh, _ = instance.surface_samples(4 * config.points, seed=config.seed + 1)
        rest_vertices = fitted_vertices(instance, instance.rest_latent, pieces)
        errors = {"fit": surface_error(instance, vertices, observed, fresh, config.partial, config.trim),
                  "rest": surface_error(instance, rest_vertices, observed, fresh, config.partial, config.trim),
                  "sampling_gap": sampling_gap(instance, fresh, len(observed), config.seed + 2, config.trim)}
        if errors["rest"] <= errors["fit"] * (1.0 + config.rest_margin):
            # fit again in the whole space, unless SOURCE explains the observation as well as another
            # sampling of SOURCE would: then the observation shows SOURCE and there is nothing to find
            moved = errors["rest"] > FALLBACK_GAP_RATIO * errors["sampling_gap"]
            if config.full_space_fallback and moved and instance.k_q < instance.k:
                whole = whole_space(instance.k, instance.prior_mean.dtype, instance.device).basis
                z_full, loss_full, _ = fit_in(whole, 0)
                vertices_full = fitted_vertices(instance, z_full, pieces, registration)
                error_full = surface_error(instance, vertices_full, observed, fresh, config.partial, config.trim)
                if errors["rest"] > error_full * (1.0 + config.rest_margin):
                    z, loss, full_space, errors["fit"], vertices = z_full, loss_full, True, error_full, vertices_full
            if not full_space:
                z, kept_rest, vertices = instance.rest_latent.detach().clone(), True, rest_vertices
                loss = objective(z[None]).detach()
    return IKResult(instance.coordinates(z), z, float(loss[0]), start_losses.detach().cpu(),
                    time.perf_counter() - started, vertices, errors, kept_rest, full_space)
