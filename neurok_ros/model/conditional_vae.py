"""The NeuROK conditional VAE: E_cond (prior), E_vae (posterior) and D (decoder) together."""
from __future__ import annotations

import torch
from torch import nn

from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.model.config import ModelConfig
from neurok_ros.model.deformation_decoder import DeformationDecoder, QueryCache
from neurok_ros.model.deformation_encoder import DeformationEncoder
from neurok_ros.model.deformation_output import apply_deformation  # noqa: F401  (re-exported)
from neurok_ros.model.prior_encoder import PriorEncoder


def parameter_count(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _repeat_per_draw(tensor: torch.Tensor, count: int) -> torch.Tensor:
    """(B, ...) -> (B * count, ...), each pair's entry repeated count times in a row."""
    return tensor.unsqueeze(1).expand(-1, count, *tensor.shape[1:]).flatten(0, 1)


class NeuROKModel(nn.Module):
    """Conditional VAE over per-point deformations of a shape M0; all tensors in M0's normalised frame
    (bounding-box centre at the origin, longest side 1).

    points (B, N, 3): surface samples of M0; deformation (B, N, 8 | 3): their deformation to the other
    pose; query_points (B or 1, Q, 3): where the decoder predicts; z (B, K, F_token).
    posterior_bank: the checkpoint's PosteriorBank (model/posterior_bank.py), set by load_model; None
    without one (the prior is then N(mu, I))."""

    posterior_bank = None

    def __init__(self, config: ModelConfig | dict):
        super().__init__()
        self.config = config if isinstance(config, ModelConfig) else ModelConfig.from_dict(config)
        self.prior_encoder = PriorEncoder(self.config)
        self.deformation_encoder = DeformationEncoder(self.config)
        self.decoder = DeformationDecoder(self.config)

    @property
    def output(self) -> str:
        return self.config.output

    def encode_prior(self, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """points (B, N, 3) -> prior mean mu (B, K, F_token), shape tokens (B, K, W)."""
        return self.prior_encoder(points)

    def encode_posterior(self, points: torch.Tensor, deformation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """-> mean, logvar (B, K, F_token) of q(z | delta, M0)."""
        return self.deformation_encoder(points, deformation)

    def prepare_queries(self, query_points: torch.Tensor) -> QueryCache:
        """Query-only decoder work for fixed query points (N, 3) or (B, N, 3); reuse across decodes."""
        return self.decoder.prepare_queries(query_points)

    def decode(self, z: torch.Tensor, query_points: torch.Tensor | None = None,
               shape_context: torch.Tensor | None = None, query_cache: QueryCache | None = None) -> torch.Tensor:
        """z (B, K, F_token) or (B, k) -> per-query deformation (B, N, 8) unit dual quaternions or
        (B, N, 3) displacements; shape_context: the shape tokens from encode_prior (B or 1, K, W)."""
        return self.decoder(z, query_points, shape_context, query_cache)

    def decode_positions(self, z: torch.Tensor, query_cache: QueryCache,
                         shape_context: torch.Tensor | None = None) -> torch.Tensor:
        """Deformed query points (B, N, 3), normalised frame."""
        prediction = self.decode(z, shape_context=shape_context, query_cache=query_cache)
        return apply_deformation(prediction, query_cache.points, self.output)

    def forward(self, points: torch.Tensor, deformation: torch.Tensor, query_points: torch.Tensor,
                sample: bool = True, prior_draws: int = 0,
                draw_points: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """Training pass. Returns prediction (B, Q, 8 | 3), posterior_mean, posterior_logvar,
        prior_mean, z (each (B, K, F_token)). sample=False decodes the posterior mean.
        prior_draws = S > 0: also decode S draws z ~ N(prior_mean, I) per pair at draw_points (B, C, 3)
        -> "draw_positions" (B, S, C, 3), the deformed points (for the prior terms of the loss)."""
        prior_mean, shape_tokens = self.encode_prior(points)
        if self.output == "dual_quaternion":
            deformation = dq.canonical_sign(deformation)
        mean, logvar = self.encode_posterior(points, deformation)
        z = mean + torch.exp(0.5 * logvar) * torch.randn_like(mean) if sample else mean
        prediction = self.decode(z, query_points, shape_tokens)
        outputs = {"prediction": prediction, "posterior_mean": mean, "posterior_logvar": logvar,
                   "prior_mean": prior_mean, "z": z}
        if prior_draws:
            outputs["draw_positions"] = self._decode_prior_draws(prior_mean, shape_tokens, draw_points, prior_draws)
        return outputs

    def _decode_prior_draws(self, prior_mean: torch.Tensor, shape_tokens: torch.Tensor, draw_points: torch.Tensor,
                            count: int) -> torch.Tensor:
        """count draws z ~ N(prior_mean, I) per pair, decoded at draw_points (B, C, 3) -> (B, count, C, 3)."""
        batch, points = draw_points.shape[:2]
        z = _repeat_per_draw(prior_mean, count)
        z = z + torch.randn_like(z)  # (B * S, K, F): draws z ~ N(prior_mean, I)
        queries = _repeat_per_draw(draw_points, count)
        prediction = self.decode(z, queries, _repeat_per_draw(shape_tokens, count))
        return apply_deformation(prediction, queries, self.output).view(batch, count, points, 3)
