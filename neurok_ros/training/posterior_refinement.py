"""Refine posterior means by gradient steps on each pair's own training objective.

E_vae is amortised: one network maps every pair's motion to its posterior mean, and it misses the
per-pair optimum by a wide margin on some motions. Sliding drawers and windows are the worst case
(docs/model.md, "The encoder misses the slides"): the training objective at the mean E_vae gives is
about twice that at the best mean for the same pair, whose decode reproduces three times the travel.
Refining the mean, as a semi-amortised VAE does at training time, closes most of that gap after
training, wherever a pair's true motion is known: in the amortisation-gap study (docs/experiments.md),
and in the posterior bank, which is built from training pairs (`neurok bank --refine-steps`; off by default).

    mean* = argmin_mean  recon(decode(mean), pair) + kl_weight * KL(N(mean, exp(logvar)) || N(prior, I))

recon and KL are those of the training loss (neurok_loss: the run's weights, summed over the query
points); logvar stays E_vae's. Adam from E_vae's mean (adam_on_rows, as the IK's fits); the best
mean seen per pair is kept.
"""
from __future__ import annotations

import torch

from neurok_ros.kinematics.inverse_kinematics import adam_on_rows
from neurok_ros.model.losses import LossConfig, kl_to_prior, reconstruction_terms, weighted_reconstruction


def pair_objective(model, mean: torch.Tensor, logvar: torch.Tensor, prior_mean: torch.Tensor,
                   shape_tokens: torch.Tensor, batch: dict[str, torch.Tensor], loss: LossConfig) -> torch.Tensor:
    """(B,) the training objective of each pair at posterior mean `mean` (B, K, F_token), decoded
    without sampling, on the batch's query points (normalised units)."""
    prediction = model.decode(mean, batch["query_points"], shape_tokens).float()
    terms = reconstruction_terms(prediction, batch["query_points"], batch["target_positions"],
                                 batch.get("target_dual_quaternions"), model.output)
    reconstruction = weighted_reconstruction(terms, model.output, loss, prediction.shape[1])
    return reconstruction + loss.kl_weight * kl_to_prior(mean.float(), logvar.float(), prior_mean.float())


def refine_posterior_means(model, mean: torch.Tensor, logvar: torch.Tensor, prior_mean: torch.Tensor,
                           shape_tokens: torch.Tensor, batch: dict[str, torch.Tensor], loss: LossConfig,
                           steps: int, rate: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Adam on the posterior means (B, K, F_token) of a batch of pairs, the model's weights fixed.
    Returns (refined means, objective before (B,), objective after (B,)); steps = 0 returns the
    means unchanged."""
    mean = mean.detach()

    def objective(rows: torch.Tensor) -> torch.Tensor:
        return pair_objective(model, rows.view_as(mean), logvar, prior_mean, shape_tokens, batch, loss)

    with torch.no_grad():
        before = objective(mean.flatten(1))
    if steps <= 0:
        return mean.clone(), before, before.clone()
    refined, after = adam_on_rows(mean.flatten(1), objective, steps, rate)
    return refined.view_as(mean), before, after
