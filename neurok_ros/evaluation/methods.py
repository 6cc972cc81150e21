"""The rows of the evaluation table as methods with one interface:

    method.predict(source_vertices (n, 3), faces (m, 3), target_points (M, 3)) -> Prediction

SOURCE is a full mesh; of TARGET a method sees only surface samples (no vertices, no correspondence),
in SOURCE's frame and units. The prediction is SOURCE's vertices moved, in SOURCE's vertex order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from neurok_ros.evaluation.pca_baseline import PCASubspace, fit_pca_pose
from neurok_ros.kinematics.fit_ensemble import fit_ensemble
from neurok_ros.kinematics.ik_config import IKConfig
from neurok_ros.kinematics.instance import EncodingConfig


@dataclass
class Prediction:
    """vertices (n, 3) float64; ik_seconds: the fit (0 for identity); encode_seconds: encoding the SOURCE
    mesh (prior, subspace; 0 where there is none); extras: method facts (k, k_q, loss...)."""

    vertices: np.ndarray
    ik_seconds: float
    encode_seconds: float = 0.0
    extras: dict = field(default_factory=dict)


@dataclass
class Method:
    """What every row has: key, a short id ("neurok", "identity"...); label, the table's row name;
    description, one line. Each row class below adds predict(source_vertices, faces, target_points)."""

    key: str
    label: str
    description: str


@dataclass
class IdentityMethod(Method):
    """No deformation: the prediction is SOURCE itself."""

    key: str = "identity"
    label: str = "Baseline: identity (no deformation)"
    description: str = "prediction = SOURCE"

    def predict(self, source_vertices, faces, target_points) -> Prediction:
        return Prediction(np.array(source_vertices, dtype=np.float64), 0.0)


@dataclass
class NeuROKMethod(Method):
    """Encode SOURCE with `model` (prior mean, active subspace or the whole latent space), then fit_pose
    on TARGET's samples in SOURCE's normalised frame and decode SOURCE's vertices; fits > 1: the vertex
    mean of that many fits (fit_ensemble; fit 0 is the single fit)."""

    model: torch.nn.Module = None
    encoding: EncodingConfig = EncodingConfig()
    ik: IKConfig = IKConfig()
    fits: int = 1

    def predict(self, source_vertices, faces, target_points) -> Prediction:
        ensemble = fit_ensemble(self.model, source_vertices, faces, target_points, self.fits, self.encoding,
                                self.ik)
        instance = ensemble.members[0][0]
        encode_seconds = sum(member.seconds for member, _ in ensemble.members)
        fit_seconds = sum(result.seconds for _, result in ensemble.members)
        return Prediction(ensemble.vertices, fit_seconds, encode_seconds,
                          {"k": instance.k, "k_q": instance.k_q,
                           "loss": float(np.mean([float(result.loss) for _, result in ensemble.members])),
                           "decode_seconds": ensemble.seconds - encode_seconds - fit_seconds, "fits": self.fits})


@dataclass
class PCAMethod(Method):
    """Displace SOURCE by the PCA subspace field fitted to TARGET's samples with NeuROK's IK settings
    (pca_baseline.fit_pca_pose)."""

    subspace: PCASubspace = None
    ik: IKConfig = IKConfig()

    def predict(self, source_vertices, faces, target_points) -> Prediction:
        result = fit_pca_pose(self.subspace, source_vertices, faces, target_points, self.ik)
        return Prediction(result.vertices, result.seconds, 0.0,
                          {"k": self.subspace.dim, "k_q": self.subspace.dim, "loss": result.loss})
