"""What fit_pose needs of a pose space: a mesh whose shape a latent vector z (k,) sets.

NeuROKInstance (kinematics/instance.py) is one: z is the decoder's latent. The PCA baseline's field
(evaluation/pca_baseline.py, PCAPoseSpace) is another: z is the coefficient vector. The fit moves z =
rest_latent + A q in the span of A = subspace.basis (k, k_q) and of motion_offsets, then z itself.
Points are in the input mesh's normalised frame (transform), except `vertices` and decode's output,
which are in the mesh's own frame and units.
"""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import torch

from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.surface_sampling import SurfaceSamples
from neurok_ros.kinematics.active_subspace import Subspace


class PoseSpace(Protocol):
    """vertices (n, 3) float64 and faces (m, 3): the input mesh; transform: its frame -> the normalised
    one; prior_mean (k,): centre of the objective's prior term, whose dtype and device the fit takes;
    rest_latent (k,): z of the input pose (q = 0, the first start); subspace: the q stage's basis A
    (k, k_q); motion_offsets (E, k): offsets from rest_latent that join the starts and the q stage's
    basis, or None."""

    vertices: np.ndarray
    faces: np.ndarray
    transform: NormalisingTransform
    prior_mean: torch.Tensor
    rest_latent: torch.Tensor
    subspace: Subspace
    motion_offsets: torch.Tensor | None

    @property
    def k(self) -> int: ...

    @property
    def k_q(self) -> int: ...

    @property
    def device(self) -> torch.device: ...

    def coordinates(self, z: torch.Tensor) -> torch.Tensor:
        """z (..., k) -> q (..., k_q)."""

    def prior_draws(self, count: int, seed: int) -> torch.Tensor:
        """(count, k) seeded candidate starts besides rest_latent."""

    def surface_samples(self, count: int, seed: int = 0) -> tuple[SurfaceSamples, torch.Tensor]:
        """Area-uniform samples of the input mesh and their normalised points (count, 3)."""

    def query_cache(self, points: torch.Tensor) -> Any:
        """What positions needs to move normalised points (N, 3), computed once per sample set."""

    def positions(self, z: torch.Tensor, queries: Any) -> torch.Tensor:
        """(B, N, 3) normalised positions of the queried points for z (B, k); differentiable in z."""

    def decode(self, q=None, z=None) -> np.ndarray:
        """(n, 3) float64 mesh vertices at z (k,), the input's frame, units and vertex order."""


def projected_prior_draws(space, count: int, seed: int) -> torch.Tensor:
    """(count, k): the prior mean, then N(prior_mean, I) draws, each projected on the subspace
    (z_rest + A A^T (z - z_rest)); space needs prior_mean, rest_latent, subspace, k and device."""
    noise = torch.randn(count, space.k, generator=torch.Generator().manual_seed(seed))
    noise = noise.to(space.device, space.prior_mean.dtype)
    noise[0] = 0.0  # the prior mean itself
    basis = space.subspace.basis
    return space.rest_latent + ((space.prior_mean + noise - space.rest_latent) @ basis) @ basis.T
