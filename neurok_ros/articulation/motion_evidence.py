"""What the learned space says about how a mesh moves: rigid transforms of surface samples under the
motions of the posterior bank's nearest training shapes.

    evidence = motion_evidence(instance, num_points=2048, num_motions=48)
    evidence.rest      (N, 3)       float64, normalised frame (bbox centre 0, longest side 1)
    evidence.moved     (E, N, 3)    the samples under each of E motions
    evidence.rotations (E, N, 3, 3) and evidence.translations (E, N, 3): each sample's own rigid
                       transform (the decoder's dual quaternion), rest -> moved

The samples are area-uniform, plus `per_piece` more on every welded piece that area sampling leaves
with fewer (a handle or a knob is a part however small its area), up to `extra` in all.
Each motion is z = z_rest + offset, one of the bank offsets nearest the mesh's prior mean (the
motions of the most similar training shapes), so each is a plausible pose of this mesh.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurok_ros.geometry import dual_quaternion as dq
from neurok_ros.geometry.mesh_cleaning import face_double_areas
from neurok_ros.geometry.rigid_pieces import welded_pieces
from neurok_ros.geometry.surface_sampling import SurfaceSamples, sample_surface


@dataclass
class MotionEvidence:
    """See the module docstring; samples: the surface samples (face ids, barycentrics, points in the
    input frame); pieces (n,): the welded piece of each mesh vertex (rigid_pieces.welded_pieces)."""

    samples: SurfaceSamples
    rest: np.ndarray
    moved: np.ndarray
    rotations: np.ndarray
    translations: np.ndarray
    pieces: np.ndarray

    @property
    def num_motions(self) -> int:
        return int(self.moved.shape[0])


def bank_offsets(instance, count: int) -> torch.Tensor:
    """(E, k) the latent offsets of the `count` posterior-bank entries nearest the instance's prior
    mean; without a bank, `count` unit Gaussian draws (seeded)."""
    bank = instance.model.posterior_bank
    if bank is None:
        generator = torch.Generator().manual_seed(0)
        return torch.randn(count, instance.k, generator=generator).to(instance.prior_mean)
    return bank.nearest_offsets(instance.prior_mean, count)


def piece_samples(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, count: int, per_piece: int,
                  extra: int, rng: np.random.Generator) -> SurfaceSamples:
    """`count` area-uniform samples of the mesh plus up to `per_piece` on each welded piece (pieces
    (n,) per vertex) that has fewer (largest such pieces first, at most `extra` added); input frame."""
    samples = sample_surface(vertices, faces, count, rng)
    face_pieces = pieces[faces[:, 0]]
    have = np.bincount(face_pieces[samples.face_ids], minlength=int(face_pieces.max()) + 1)
    areas = np.bincount(face_pieces, weights=face_double_areas(vertices, faces), minlength=len(have))
    parts = [samples]
    for piece in np.argsort(-areas):
        if extra <= 0:
            break
        need = min(per_piece - int(have[piece]), extra)
        if need <= 0 or areas[piece] <= 0:
            continue
        own = np.flatnonzero(face_pieces == piece)
        more = sample_surface(vertices, faces[own], need, rng)
        parts.append(SurfaceSamples(more.points, own[more.face_ids], more.barycentric))
        extra -= need
    return SurfaceSamples(np.concatenate([p.points for p in parts]), np.concatenate([p.face_ids for p in parts]),
                          np.concatenate([p.barycentric for p in parts]))


@torch.no_grad()
def motion_evidence(instance, num_points: int = 2048, num_motions: int = 48, seed: int = 0, per_piece: int = 16,
                    extra: int = 1024, batch: int = 16) -> MotionEvidence:
    """Decode `num_motions` bank motions at the surface samples (module docstring) of the instance's mesh."""
    pieces = welded_pieces(instance.vertices, instance.faces)
    samples = piece_samples(instance.vertices, instance.faces, pieces, num_points, per_piece, extra,
                            np.random.default_rng(seed))
    points = torch.as_tensor(instance.transform.apply(samples.points), dtype=instance.prior_mean.dtype,
                             device=instance.device)
    queries = instance.query_cache(points)
    offsets = bank_offsets(instance, num_motions)
    deformations = torch.cat([instance.deformations(instance.rest_latent[None] + offsets[i:i + batch], queries)
                              for i in range(0, len(offsets), batch)])
    if deformations.shape[-1] == 8:
        rotations, translations = dq.to_rotation_translation(dq.normalise(deformations.double()))
    else:  # a displacement model: each sample's transform is a pure translation
        translations = deformations.double()
        rotations = torch.eye(3, dtype=torch.float64).expand(*translations.shape[:-1], 3, 3)
    rest = points.double()
    moved = (rotations @ rest[None, :, :, None])[..., 0] + translations
    return MotionEvidence(samples, rest.cpu().numpy(), moved.cpu().numpy(), rotations.cpu().numpy(),
                          translations.cpu().numpy(), pieces)
