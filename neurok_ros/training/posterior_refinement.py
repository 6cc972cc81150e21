"""Refine posterior means by gradient steps on each pair's own training objective.

E_vae is amortised: one network maps every pair's motion to its posterior mean, and it misses the
per-pair optimum by a wide margin on some motions. Sliding drawers and windows are the worst case
(docs/model.md, "The encoder misses the slides"): the training objective at the mean E_vae gives is
about twice that at the best mean for the same pair, whose decode reproduces three times the travel.
Refining the mean, as a semi-amortised VAE does at training time, closes most of that gap after
training, wherever a pair's true motion is known: in scripts/amortisation_gap_check.py, and in the
posterior bank, which is built from training pairs (`neurok bank --refine-steps`; off by default).

    mean* = argmin_mean  recon(decode(mean), pair) + kl_weight * KL(N(mean, exp(logvar)) || N(prior, I))

recon and KL are those of the training loss (neurok_loss: the run's weights, summed over the query
points); logvar stays E_vae's. Adam from E_vae's mean; the best mean seen per pair is kept.
"""
from __future__ import annotations

import torch

from neurok_ros.model.losses import LossConfig, kl_to_prior, reconstruction_terms


def pair_objective(model, mean: torch.Tensor, logvar: torch.Tensor, prior_mean: torch.Tensor,
                   shape_tokens: torch.Tensor, batch: dict[str, torch.Tensor], loss: LossConfig) -> torch.Tensor:
    """(B,) the training objective of each pair at posterior mean `mean` (B, K, F_token), decoded
    without sampling, on the batch's query points (normalised units)."""
    prediction = model.decode(mean, batch["query_points"], shape_tokens).float()
    terms = reconstruction_terms(prediction, batch["query_points"], batch["target_positions"],
                                 batch.get("target_dual_quaternions"), model.output)
    reconstruction = loss.position_weight * terms["position"]
    if model.output == "dual_quaternion":
        reconstruction = reconstruction + loss.dq_weight * terms["dq"]
    if loss.reconstruction == "mean":
        reconstruction = reconstruction / prediction.shape[1]
    return reconstruction + loss.kl_weight * kl_to_prior(mean.float(), logvar.float(), prior_mean.float())


def refine_posterior_means(model, mean: torch.Tensor, logvar: torch.Tensor, prior_mean: torch.Tensor,
                           shape_tokens: torch.Tensor, batch: dict[str, torch.Tensor], loss: LossConfig,
                           steps: int, rate: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Adam on the posterior means (B, K, F_token) of a batch of pairs, the model's weights fixed.
    Returns (refined means, objective before (B,), objective after (B,)); steps = 0 returns the
    means unchanged."""
    mean = mean.detach()
    with torch.no_grad():
        before = pair_objective(model, mean, logvar, prior_mean, shape_tokens, batch, loss)
    best, best_value = mean.clone(), before.clone()
    if steps <= 0:
        return best, before, best_value
    variable = mean.clone().requires_grad_(True)
    optimiser = torch.optim.Adam([variable], lr=rate)
    with torch.enable_grad():
        for _ in range(steps):
            value = pair_objective(model, variable, logvar, prior_mean, shape_tokens, batch, loss)
            (gradient,) = torch.autograd.grad(value.sum(), variable)
            with torch.no_grad():
                better = value < best_value
                best_value = torch.where(better, value.detach(), best_value)
                best[better] = variable.detach()[better]
            variable.grad = gradient
            optimiser.step()
    with torch.no_grad():  # the last step's result
        value = pair_objective(model, variable, logvar, prior_mean, shape_tokens, batch, loss)
        better = value < best_value
        best_value = torch.where(better, value, best_value)
        best[better] = variable.detach()[better]
    return best, before, best_value
