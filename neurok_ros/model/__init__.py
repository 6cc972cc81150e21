"""The NeuROK conditional VAE (docs/architecture.md §6), one block per file.

fourier_embedding  xyz -> Fourier features -> width
attention          explicit matmul + softmax attention (forward-mode AD passes through)
perceiver          K learnable tokens cross-attending to a point set, then self-attention
prior_encoder      E_cond(M0): points -> prior mean mu (K, F_token) and shape tokens
deformation_encoder E_vae(delta, M0): points + deformation -> posterior mean and log-variance
deformation_decoder D(z; M0): latent tokens (+ shape tokens), query points -> per-point deformation
conditional_vae    the whole model; config holds its hyper-parameters
losses             reconstruction (dual quaternion and position) + lambda * KL(q || N(mu_cond, I))
"""
from neurok_ros.model.conditional_vae import NeuROKModel, parameter_count
from neurok_ros.model.config import ModelConfig

__all__ = ["ModelConfig", "NeuROKModel", "parameter_count"]
