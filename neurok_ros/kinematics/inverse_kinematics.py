"""Inverse kinematics in the learned space: find q (then z) whose decoded shape matches an observation.

The observation is a point set (a scan, or samples of a target mesh): no correspondence with the
source is used. The fit runs on any pose space (kinematics/pose_space.py): a NeuROK instance, or the
PCA baseline's field (its fits without the rest check). Objective (kinematics/objectives.py): symmetric
Chamfer-L2 between decoded surface samples of the source and
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

import numpy as np
import torch

from neurok_ros.geometry.rigid_pieces import RigidPieces, rigidity_residual
from neurok_ros.kinematics.active_subspace import whole_space
from neurok_ros.kinematics.ik_config import IKConfig
from neurok_ros.kinematics.objectives import chamfer_l2, sampling_gap, surface_error
from neurok_ros.kinematics.piece_registration import register_pieces
from neurok_ros.kinematics.pose_space import PoseSpace

FALLBACK_GAP_RATIO = 1.5  # the observation differs from SOURCE when its surface error exceeds 1.5 gaps


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


def adam_on_rows(variable: torch.Tensor, objective, steps: int, rate: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 prune: tuple[int, int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Adam on a batch of independent variables (B, d) (objective: (B', d) -> (B',), rows
    independent); returns the best (variable, loss) seen per row. prune (after, keep): after `after`
    steps only the `keep` rows with the lowest loss so far go on, the others keep what they had (the
    objective sees those rows alone from then on); keep 0 prunes nothing. Only the variable's
    gradient is computed, not that of the model weights the objective runs through;
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


def fitted_vertices(space: PoseSpace, z: torch.Tensor, pieces: RigidPieces | None,
                    registration=None) -> np.ndarray:
    """(n, 3) float64, input frame and units: z (k,) decoded, then (pieces given) each piece projected
    on its best rigid motion from the input pose, then (registration given: fitted vertices (n, 3) ->
    registered ones, piece_registrar) the pieces registered on the observation."""
    decoded = space.decode(z=z)
    if pieces is None:
        return decoded
    projected = pieces.project(space.vertices, decoded)
    return projected if registration is None else registration(projected)


def start_latents(space: PoseSpace, motions: torch.Tensor | None, count: int, seed: int,
                  objective) -> torch.Tensor:
    """(max(2, count), k) starting latents: the input pose z_rest first, then the best-scoring (by
    `objective`, (B, k) -> (B,)) of the prior mean, the N(mu, I) draws projected on the subspace and,
    when given, the posterior-bank motions z_rest + offset (motions (E, k)). The decoder is flat at
    z_rest, so a real motion is far easier to reach from a bank motion near it than from q = 0."""
    draws = space.prior_draws(max(2, count) - 1, seed)
    if motions is not None:
        candidates = torch.cat([draws, space.rest_latent + motions.to(draws)])
        draws = candidates[torch.argsort(objective(candidates))[:len(draws)]]
    return torch.cat([space.rest_latent[None], draws])


def span_with(basis: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """(k, k_q + r): basis (k, k_q, orthonormal columns) followed by an orthonormal basis of the part
    of span(directions (E, k) rows) that basis does not reach (r <= E)."""
    B = basis.double()
    given = directions.to(B).T
    rest = given - B @ (B.T @ given)
    U, s, _ = torch.linalg.svd(rest, full_matrices=False)
    keep = s > 1e-6 * float(given.norm())  # directions basis already spans add nothing
    return torch.cat([B, U[:, keep]], dim=1).to(basis.dtype)


def piece_registrar(space: PoseSpace, pieces: RigidPieces, target: torch.Tensor, config: IKConfig):
    """The registration fitted_vertices applies for `config`: fitted vertices (n, 3, input frame) ->
    the same with every group of pieces registered on target (M, 3, normalised frame;
    piece_registration.register_pieces from 4 * points samples, judged on as many fresh ones)."""
    samples, _ = space.surface_samples(4 * config.points, seed=config.seed + 4)
    fresh, _ = space.surface_samples(4 * config.points, seed=config.seed + 3)
    rest = space.transform.apply(space.vertices)

    def register(vertices: np.ndarray) -> np.ndarray:
        return space.transform.invert(register_pieces(
            rest, space.transform.apply(vertices), space.faces, pieces, samples, target.cpu(),
            config.piece_steps, config.piece_tolerance, config.partial, config.trim, fresh,
            config.piece_links, config.piece_link_tolerance))
    return register


def fit_pose(space: PoseSpace, target_points: torch.Tensor, config: IKConfig = IKConfig()) -> IKResult:
    """Fit a pose space (a NeuROKInstance, the PCA baseline's PCAPoseSpace) to observed points (M, 3) in
    its normalised frame (space.transform.apply of the observation in the mesh frame)."""
    started = time.perf_counter()
    target = torch.as_tensor(target_points, dtype=space.prior_mean.dtype).to(space.device)
    pieces = RigidPieces.of_mesh(space.vertices, space.faces) if config.rigid_pieces else None
    with torch.no_grad():
        drawn = [space.surface_samples(config.points, seed=s)
                 for s in sample_set_seeds(config.seed, config.sample_sets)]
        caches = [space.query_cache(points) for _, points in drawn]
    labels = [None if pieces is None else pieces.sample_labels(space.faces, samples.face_ids).to(space.device)
              for samples, _ in drawn]
    sample_sets = itertools.cycle([(cache, points, piece_of)
                                   for cache, (_, points), piece_of in zip(caches, drawn, labels)])
    w = config.prior_weight

    def objective(z: torch.Tensor) -> torch.Tensor:
        prior = 0.5 * w * (z - space.prior_mean).square().sum(1)
        cache, rest_points, piece_of = next(sample_sets)
        moved = space.positions(z, cache)
        loss = chamfer_l2(moved, target, config.partial, config.trim) + prior
        if piece_of is not None and config.rigidity_weight > 0:
            loss = loss + config.rigidity_weight * rigidity_residual(rest_points, moved, piece_of)
        return loss

    motions = space.motion_offsets if config.bank_starts else None
    with torch.no_grad():
        start_offsets = start_latents(space, motions, config.starts, config.seed, objective) - space.rest_latent
    basis = space.subspace.basis if motions is None else span_with(space.subspace.basis, motions)
    registration = None
    if pieces is not None and config.piece_steps > 0:
        registration = piece_registrar(space, pieces, target, config)

    def fit_in(basis: torch.Tensor, z_steps: int):
        """Adam from every start in z = z_rest + basis q, then z_steps in z: (z (k,), loss (1,), start losses)."""
        def q_objective(q: torch.Tensor) -> torch.Tensor:
            return objective(space.rest_latent + q @ basis.T)

        q_all, start_losses = adam_on_rows(start_offsets @ basis, q_objective, config.q_steps, config.q_rate,
                                           prune=(config.q_prune_after, config.q_keep))
        best = int(torch.argmin(start_losses))
        z = (space.rest_latent + q_all[best:best + 1] @ basis.T).detach()
        loss = start_losses[best:best + 1]
        if z_steps > 0:
            z, loss = adam_on_rows(z, objective, z_steps, config.z_rate)
        return z[0].detach(), loss, start_losses

    z, loss, start_losses = fit_in(basis, config.z_steps)
    vertices = fitted_vertices(space, z, pieces, registration)
    errors, kept_rest, full_space = None, False, False
    if config.rest_check:
        observed = target.double().cpu().numpy()
        fresh, _ = space.surface_samples(4 * config.points, seed=config.seed + 1)
        rest_vertices = fitted_vertices(space, space.rest_latent, pieces)
        errors = {"fit": surface_error(space, vertices, observed, fresh, config.partial, config.trim),
                  "rest": surface_error(space, rest_vertices, observed, fresh, config.partial, config.trim),
                  "sampling_gap": sampling_gap(space, fresh, len(observed), config.seed + 2, config.trim)}
        if errors["rest"] <= errors["fit"] * (1.0 + config.rest_margin):
            # fit again in the whole space, unless SOURCE explains the observation as well as another
            # sampling of SOURCE would: then the observation shows SOURCE and there is nothing to find
            moved = errors["rest"] > FALLBACK_GAP_RATIO * errors["sampling_gap"]
            if config.full_space_fallback and moved and space.k_q < space.k:
                whole = whole_space(space.k, space.prior_mean.dtype, space.device).basis
                z_full, loss_full, _ = fit_in(whole, 0)
                vertices_full = fitted_vertices(space, z_full, pieces, registration)
                error_full = surface_error(space, vertices_full, observed, fresh, config.partial, config.trim)
                if errors["rest"] > error_full * (1.0 + config.rest_margin):
                    z, loss, full_space, errors["fit"], vertices = z_full, loss_full, True, error_full, vertices_full
            if not full_space:
                z, kept_rest, vertices = space.rest_latent.detach().clone(), True, rest_vertices
                loss = objective(z[None]).detach()
    return IKResult(space.coordinates(z), z, float(loss[0]), start_losses.detach().cpu(),
                    time.perf_counter() - started, vertices, errors, kept_rest, full_space)
