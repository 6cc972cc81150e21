"""A NeuROK instance as a KinematicMap: q -> n surface points in metres, in the mesh frame.

    x(q) = transform.invert(instance.positions(z_rest + A q, cache))

The points are area-uniform samples of the input mesh (equal masses summing to the object's mass),
followed by optional massless `extra_points` (contact and push points on the surface: forces then
act exactly where they were asked for, and the mass distribution stays area-uniform). Their decoder
queries are prepared once (QueryCache), so each evaluation only runs the z-dependent part of the
decoder. The dynamics state is float64 (small mass matrices, energy bookkeeping); the
decoder runs in its own dtype (float32). Because of that, the difference steps of the map are those
of float32 (0.011 and 0.098 in q units, q of unit scale: the prior has unit variance),
whatever the state's dtype.

Simulated coordinates. The active subspace A (k, k_q) is found around the prior mean; at the rest
latent many of its directions barely move the surface (the shipped model: eigenvalues of the mass
matrix M(0) = J^T diag(m) J spread over 6 decades). Such a direction has almost no inertia, so any
force (gravity) sends its coordinate far out within one step, where the decoder extrapolates and
the motion is meaningless. The simulation therefore uses the principal directions of M(0) inside
the active subspace: the eigenvectors U (k_q, k_sim) of M(0) with eigenvalue >= inertia_ratio *
the largest, at most `coordinates` of them. z = z_rest + A U q_sim; A U has orthonormal columns, so
q_sim keeps latent units, and the instance's coordinates are q = U q_sim.

Held points (pins). The learned space moves the whole object along with its parts (a door's motions
also move its frame; nothing in the data fixes the object's pose). When points are held, the map is
therefore the shape in the frame of the held part: each decoded shape is moved by the rigid motion
that puts the held points back onto their rest positions (Kabsch), unless they lie on one line and
so do not fix a rotation (then the pin springs alone hold them). A rigid drift of the base or
frame then costs nothing and moves nothing; what the pin springs still resist is the held part's
own deformation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import torch

from neurok_ros.dynamics.kinematic_map import KinematicMap
from neurok_ros.dynamics.potentials import Potentials
from neurok_ros.geometry.rigid_alignment import apply_rigid, fixes_a_frame, rigid_alignment
from neurok_ros.geometry.surface_sampling import SurfaceSamples

PIN_PENALTY = 10.0  # weight of the pinned points' motion against the free points' in choosing directions

FLOAT32_STEPS = (0.011, 0.098)  # (h1, h2) of KinematicMap for a float32 decoder


@dataclass
class LearnedMap:
    """kmap: the KinematicMap (metres, kg, float64 state); samples: the surface samples (mesh frame)
    that carry the mass (points 0 .. s-1; the massless extra points follow); directions: U
    (k_q, k_sim), the simulated directions in the instance's coordinates; inertia: the eigenvalues
    of M(0) (k_q,), kg m^2 per unit q^2, largest first; basis: A U (k, k_sim), the latent directions
    that are simulated; latent_offset: z_rest - mu (k,); rest_positions: x(q = 0) (n, 3) metres,
    the input pose (exactly, with rest-anchored decoding); pinned (n,) 0/1: the points held in place
    by the pin stiffness; latents: q_sim (B, k_sim) -> z (B, k) = z_rest + A U q_sim;
    held_alignment: z (B, k) -> (R, t), the rigid motion that keeps the held points in place, which
    the map's points already include (None without held points; the output frames apply it too)."""

    kmap: KinematicMap
    samples: SurfaceSamples
    directions: torch.Tensor
    inertia: torch.Tensor
    basis: torch.Tensor
    latent_offset: torch.Tensor
    rest_positions: torch.Tensor
    pinned: Optional[torch.Tensor] = None
    latents: Optional[Callable[[torch.Tensor], torch.Tensor]] = None
    held_alignment: Optional[Callable[[torch.Tensor], tuple]] = None

    @property
    def num_coords(self) -> int:
        return self.kmap.num_coords

    @property
    def num_samples(self) -> int:
        """The mass-carrying points (the first ones); the massless extra points follow."""
        return len(self.samples.points)

    def potentials(self, gravity, stiffness: float, barrier: float, rest_positions=None,
                   pin_stiffness: float = 0.0) -> Potentials:
        """Gravity (3,) m/s^2, elastic restoring toward x(q = 0) with k_s 1/s^2 (plus k_pin 1/s^2 on
        the pinned points), and the prior barrier 1/2 k_p |z - mu|^2 with z = z_rest + A q (J per unit
        z^2). rest_positions (n, 3): x(q = 0) of the map the solver uses, when it is not the decoder
        (a surrogate's own rest pose)."""
        rest = self.rest_positions if rest_positions is None else rest_positions
        pinned = self.pinned is not None and bool(self.pinned.any())
        return Potentials(gravity=gravity, stiffness=stiffness, rest_positions=rest,
                          pin_stiffness=pin_stiffness if pinned else 0.0,
                          pinned=self.pinned.to(rest.device) if pinned else None, barrier=barrier,
                          basis=self.basis.to(rest.device),
                          latent_offset=self.latent_offset.to(rest.device))

    def instance_coordinates(self, q_sim: torch.Tensor) -> torch.Tensor:
        """(..., k_sim) -> q = U q_sim: the instance's coordinates (..., k_q) (instance.decode(q))."""
        return q_sim @ self.directions.T.to(q_sim.device, q_sim.dtype)


def _principal_directions(positions_batch, k_q: int, masses: torch.Tensor, step: float,
                          coordinates: Optional[int], inertia_ratio: float, pinned: Optional[torch.Tensor] = None):
    """U (k_q, k_sim) and the eigenvalues of M(0) (k_q,), largest first, from one batched forward
    of 2 k_q latents (central differences at q = 0).

    With pinned points (pinned (n,) 0/1), the eigenvalues are those of M_free - PIN_PENALTY M_pinned
    (M_free, M_pinned: the mass matrices of the free and the pinned points): the directions kept move
    the free points most while moving the pinned ones least (a lid on a base that rests on a table),
    not the whole object, which the pins would only hold back."""
    eye = torch.eye(k_q, dtype=masses.dtype, device=masses.device) * step
    with torch.no_grad():
        x = positions_batch(torch.cat([eye, -eye]))
    jac = ((x[:k_q] - x[k_q:]) / (2.0 * step)).reshape(k_q, -1).T  # (3n, k_q)
    weights = masses.repeat_interleave(3)
    if pinned is not None and bool(pinned.any()):
        held = pinned.to(masses.dtype).repeat_interleave(3)
        weights = weights * (1.0 - held) - PIN_PENALTY * weights * held
    mass = jac.T @ (weights[:, None] * jac)
    values, vectors = torch.linalg.eigh(mass)
    values, vectors = values.flip(0), vectors.flip(1)
    keep = int((values >= inertia_ratio * values[0]).sum())
    if coordinates is not None:
        keep = min(keep, int(coordinates))
    return vectors[:, :max(1, keep)], values


def learned_kinematic_map(instance, points: int = 256, mass: float = 1.0, coordinates: Optional[int] = None,
                          inertia_ratio: float = 0.0, derivatives: str = "auto", seed: int = 0,
                          dtype: torch.dtype = torch.float64, extra_points=None,
                          pin: Optional[Callable[[SurfaceSamples], np.ndarray]] = None) -> LearnedMap:
    """The instance's kinematic map on `points` area-uniform surface samples of total mass `mass` kg.

    coordinates: at most this many simulated directions (None: up to k_q); inertia_ratio: keep the
    principal directions of M(0) whose eigenvalue is at least this fraction of the largest (0: all).
    derivatives: "ad", "fd" or "auto" (see KinematicMap); extra_points: (e, 3) massless points on the
    surface, mesh frame, appended after the samples (indices points .. points + e - 1). Positions
    are metres in the mesh frame, assuming the mesh's units are metres. pin: samples -> (points,)
    bool, the samples that are held in place (LearnedMap.pinned; the simulated directions then
    favour motion of the others).
    """
    if points < 1:
        raise ValueError(f"need at least one simulation point, got {points}")
    if not mass > 0:
        raise ValueError(f"mass must be positive, got {mass}")
    device = instance.device
    model_dtype = instance.prior_mean.dtype
    samples, normalised = instance.surface_samples(points, seed)
    extra = np.zeros((0, 3)) if extra_points is None else np.asarray(extra_points, dtype=np.float64).reshape(-1, 3)
    if len(extra):
        extra_normalised = torch.as_tensor(instance.transform.apply(extra), dtype=normalised.dtype)
        normalised = torch.cat([normalised, extra_normalised.to(normalised.device)])
    with torch.no_grad():
        cache = instance.query_cache(normalised)
    rest_latent = instance.rest_latent
    centre = torch.as_tensor(np.asarray(instance.transform.centre), dtype=dtype, device=device)
    inverse_scale = 1.0 / float(instance.transform.scale)

    def decoded(z: torch.Tensor, out_dtype: torch.dtype = dtype) -> torch.Tensor:
        """Latents (B, k) -> the points (B, n, 3) as decoded, metres, mesh frame."""
        return instance.positions(z.to(model_dtype), cache).to(out_dtype) * inverse_scale + centre

    masses = torch.full((points + len(extra),), float(mass) / points, dtype=dtype, device=device)
    masses[points:] = 0.0
    pinned = torch.zeros(points + len(extra), dtype=dtype, device=device)
    if pin is not None:
        pinned[:points] = torch.as_tensor(np.asarray(pin(samples), dtype=bool), dtype=dtype, device=device)
    held = torch.nonzero(pinned > 0)[:, 0]
    held_alignment, held_rest = None, None
    if 0 < len(held) < points:
        with torch.no_grad():
            held_rest = decoded(rest_latent.reshape(1, -1))[0, held]

    def held_motion(x: torch.Tensor):
        """Points (B, n, 3) -> (R (B, 3, 3), t (B, 3)): the rigid motion that puts their held points
        back where they were (geometry/rigid_alignment.py), metres, mesh frame."""
        return rigid_alignment(x[:, held], held_rest.to(x.dtype))

    if held_rest is not None and fixes_a_frame(held_rest):  # points on one line leave a free spin about it

        def held_alignment(z: torch.Tensor, out_dtype: torch.dtype = dtype):
            """Latents (B, k) -> held_motion of their decoded points."""
            return held_motion(decoded(z, out_dtype))

    def surface(z: torch.Tensor, out_dtype: torch.dtype = dtype) -> torch.Tensor:
        """Latents (B, k) -> the points (B, n, 3), metres, mesh frame; with held points, in the frame
        that keeps them in place (module docstring)."""
        x = decoded(z, out_dtype)
        return x if held_alignment is None else apply_rigid(*held_motion(x), x)

    def batch_with(to_latent: Callable[[torch.Tensor], torch.Tensor]):
        """Coordinates (B, c) -> points (B, n, 3) in the coordinates' dtype, through to_latent."""
        return lambda q: surface(to_latent(q), q.dtype)

    h1, h2 = FLOAT32_STEPS if model_dtype == torch.float32 else (None, None)

    def linear(basis: torch.Tensor):
        return lambda q: rest_latent + q.to(model_dtype) @ basis.T

    directions, inertia = _principal_directions(batch_with(linear(instance.subspace.basis)), instance.k_q,
                                                masses, h1 or 1e-4, coordinates, inertia_ratio, pinned)
    basis = (instance.subspace.basis.to(dtype) @ directions).to(model_dtype)
    latents = linear(basis)
    positions_batch = batch_with(latents)

    def positions(q: torch.Tensor) -> torch.Tensor:
        return positions_batch(q[None])[0]

    k_sim = directions.shape[1]
    kmap = KinematicMap(positions, masses, k_sim, positions_batch, derivatives, fd_step=h1, fd_step2=h2)
    with torch.no_grad():
        rest = positions(torch.zeros(k_sim, dtype=dtype, device=device))
    offset = (rest_latent - instance.prior_mean).to(dtype)
    return LearnedMap(kmap, samples, directions, inertia, basis.to(dtype), offset, rest, pinned, latents,
                      held_alignment)
