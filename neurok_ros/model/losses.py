"""Training loss: reconstruction + lambda * KL(q(z | delta) || N(mu_cond, I)).

Reconstruction, per pair, summed over the query points (the squared norm of the whole deformation
field, ||delta_sample - delta_pred||^2 of docs/architecture.md §6, so lambda = 0.01 keeps its meaning of a Gaussian
likelihood with 2 sigma^2 = lambda rather than shrinking with the point count):
  dual-quaternion output: dq_weight * min(|p - t|^2, |p + t|^2) (q and -q are the same transform)
                          + position_weight * |apply(p, x) - x_b|^2 (what the metrics measure);
  displacement output:    position_weight * |x + d - x_b|^2 (the displacement error itself).
KL in nats, summed over the k latent numbers. Everything is averaged over the batch.

reconstruction = "mean" averages the per-point errors over the query points instead: the same
lambda then weighs the KL 1/N_query as much against one point's error as "sum" does against the whole
field, which pulls the posteriors onto the prior N(mu_cond, I), so prior samples and latent-space
inverse kinematics stay on the learned manifold (at some cost in reconstruction detail).

coverage_weight > 0 adds the prior coverage term (neurok_ros/model/prior_coverage.py) over
coverage_draws draws z ~ N(mu_cond, I) per pair, in the same units as the position term (summed over
the coverage points; averaged with reconstruction = "mean"). rigidity_weight > 0 adds the draw
rigidity term (neurok_ros/model/draw_rigidity.py) on the same draws: they may change only the
distances that the data change (pairs whose distance varies by less than rigidity_tolerance).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import torch

from neurok_ros.errors import NeurokInputError
from neurok_ros.model.conditional_vae import apply_deformation
from neurok_ros.model.draw_rigidity import rigidity_loss
from neurok_ros.model.prior_coverage import coverage_loss


@dataclass(frozen=True)
class LossConfig:
    kl_weight: float = 0.01
    dq_weight: float = 1.0
    position_weight: float = 1.0
    reconstruction: str = "sum"  # sum | mean over the query points
    coverage_weight: float = 0.0
    coverage_draws: int = 8  # prior draws per pair for the coverage and rigidity terms
    rigidity_weight: float = 0.0
    rigidity_tolerance: float = 0.002  # normalised units

    def __post_init__(self):
        if self.reconstruction not in ("sum", "mean"):
            raise NeurokInputError(f"loss reconstruction {self.reconstruction!r} is not one of sum, mean")
        if min(self.coverage_weight, self.rigidity_weight) < 0 or self.coverage_draws < 1:
            raise NeurokInputError("loss coverage_weight and rigidity_weight must be non-negative and "
                                   "coverage_draws positive")

    @property
    def prior_draws(self) -> int:
        """Prior draws per pair the loss needs decoded (0 without a prior term)."""
        return self.coverage_draws if self.coverage_weight > 0 or self.rigidity_weight > 0 else 0

    @classmethod
    def from_dict(cls, data: dict | None) -> "LossConfig":
        data = dict(data or {})
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise NeurokInputError(f"unknown loss config keys {unknown}")
        kinds = {"reconstruction": str, "coverage_draws": int}
        return cls(**{k: kinds.get(k, float)(v) for k, v in data.items()})

    def to_dict(self) -> dict:
        return asdict(self)


def kl_to_prior(mean: torch.Tensor, logvar: torch.Tensor, prior_mean: torch.Tensor) -> torch.Tensor:
    """KL(N(mean, diag exp(logvar)) || N(prior_mean, I)) in nats; (B, K, F) each -> (B,)."""
    kl = 0.5 * (torch.exp(logvar) + (mean - prior_mean) ** 2 - 1.0 - logvar)
    return kl.flatten(1).sum(dim=1)


def dual_quaternion_error(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Sign-invariant squared distance min(|p - t|^2, |p + t|^2); (B, N, 8) each -> (B, N)."""
    base = (prediction ** 2).sum(-1) + (target ** 2).sum(-1)
    cross = 2.0 * (prediction * target).sum(-1)
    return base - cross.abs()


def reconstruction_terms(prediction: torch.Tensor, query_points: torch.Tensor, target_positions: torch.Tensor,
                         target_dual_quaternions: torch.Tensor | None, output: str) -> dict[str, torch.Tensor]:
    """Per-pair sums over the points: "dq" and "position" (B,), and "point_error" (B,), the mean
    Euclidean distance between predicted and true deformed points (normalised units)."""
    positions = apply_deformation(prediction, query_points, output)
    squared = ((positions - target_positions) ** 2).sum(-1)
    terms = {"position": squared.sum(-1),
             "point_error": torch.sqrt(squared + 1e-18).mean(-1)}
    if output == "dual_quaternion":
        terms["dq"] = dual_quaternion_error(prediction, target_dual_quaternions).sum(-1)
    else:
        terms["dq"] = torch.zeros_like(terms["position"])
    return terms


def weighted_reconstruction(terms: dict[str, torch.Tensor], output: str, config: LossConfig,
                            num_points: int) -> torch.Tensor:
    """(B,) the loss's reconstruction from reconstruction_terms: position_weight * position, plus
    dq_weight * dq for dual-quaternion output, divided by num_points with reconstruction = "mean"."""
    reconstruction = config.position_weight * terms["position"]
    if output == "dual_quaternion":
        reconstruction = reconstruction + config.dq_weight * terms["dq"]
    return reconstruction / num_points if config.reconstruction == "mean" else reconstruction


def neurok_loss(outputs: dict[str, torch.Tensor], batch: dict[str, torch.Tensor], output: str,
                config: LossConfig = LossConfig()) -> dict[str, torch.Tensor]:
    """outputs: NeuROKModel.forward; batch: a PairDataset batch. Returns batch means of "loss"
    (to minimise), "reconstruction", "kl", "dq", "position", "point_error", "coverage" and "rigidity"
    (0 without outputs["draw_positions"] and batch["pose_positions"])."""
    prediction = outputs["prediction"].float()
    terms = reconstruction_terms(prediction, batch["query_points"], batch["target_positions"],
                                 batch.get("target_dual_quaternions"), output)
    reconstruction = weighted_reconstruction(terms, output, config, prediction.shape[1])
    kl = kl_to_prior(outputs["posterior_mean"].float(), outputs["posterior_logvar"].float(),
                     outputs["prior_mean"].float())
    coverage, rigidity = torch.zeros_like(kl), torch.zeros_like(kl)
    if "draw_positions" in outputs:
        draws, poses = outputs["draw_positions"], batch["pose_positions"]
        with torch.set_grad_enabled(torch.is_grad_enabled() and config.coverage_weight > 0):
            coverage = coverage_loss(draws, poses)  # a term of weight 0 is only logged: no graph
        with torch.set_grad_enabled(torch.is_grad_enabled() and config.rigidity_weight > 0):
            rigidity = rigidity_loss(draws, poses, config.rigidity_tolerance)
        if config.reconstruction == "mean":
            coverage, rigidity = coverage / draws.shape[2], rigidity / draws.shape[2]
    loss = (reconstruction + config.kl_weight * kl + config.coverage_weight * coverage
            + config.rigidity_weight * rigidity)
    result = {"loss": loss, "reconstruction": reconstruction, "kl": kl, "coverage": coverage,
              "rigidity": rigidity, **terms}
    return {name: value.mean() for name, value in result.items()}
