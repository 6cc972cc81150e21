"""Hyper-parameters of the conditional VAE (the `model:` section of config/model/*.yaml)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from neurok_ros.errors import NeurokInputError

OUTPUTS = ("dual_quaternion", "displacement")


@dataclass(frozen=True)
class ModelConfig:
    """width: feature width of every token; heads: attention heads (width % heads == 0);
    num_tokens: K latent tokens; token_dim: F_token numbers per latent token (k = K * F_token);
    fourier_frequencies: octaves of the xyz Fourier features; perceiver_self_blocks: self-attention
    blocks after the cross-attention of each encoder; decoder_token_blocks: self-attention blocks over
    the latent (+ shape) tokens; decoder_query_blocks: cross-attention blocks of the query points;
    mlp_ratio: hidden width / width of every MLP; output: "dual_quaternion" (8 per point) or
    "displacement" (3 per point); decoder_shape_tokens: whether the decoder also attends to E_cond's
    shape tokens; encoder_moved_points: whether E_vae also reads the Fourier features of the moved
    points, not only the raw deformation numbers (off in the shipped checkpoint)."""

    width: int = 128
    heads: int = 4
    num_tokens: int = 16
    token_dim: int = 8
    fourier_frequencies: int = 8
    perceiver_self_blocks: int = 2
    decoder_token_blocks: int = 1
    decoder_query_blocks: int = 2
    mlp_ratio: float = 2.0
    output: str = "dual_quaternion"
    decoder_shape_tokens: bool = True
    encoder_moved_points: bool = False

    def __post_init__(self):
        if self.output not in OUTPUTS:
            raise NeurokInputError(f"model output {self.output!r} is not one of {OUTPUTS}")
        if self.width % self.heads:
            raise NeurokInputError(f"model width {self.width} is not divisible by heads {self.heads}")
        for name in ("width", "heads", "num_tokens", "token_dim", "decoder_query_blocks"):
            if getattr(self, name) < 1:
                raise NeurokInputError(f"model {name} must be at least 1")

    @property
    def latent_size(self) -> int:
        """k = K * F_token."""
        return self.num_tokens * self.token_dim

    @property
    def output_size(self) -> int:
        return 8 if self.output == "dual_quaternion" else 3

    @classmethod
    def from_dict(cls, data: dict | None) -> "ModelConfig":
        """From a YAML mapping; unknown keys are an error (a typo would silently change the model)."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise NeurokInputError(f"unknown model config keys {unknown}; known: {sorted(known)}")
        return cls(**data)

    def to_dict(self) -> dict:
        return asdict(self)
