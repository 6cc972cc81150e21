"""Prediction: what every chart returns (simulation/predict.py, simulation/articulated_chart.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Prediction:
    """The motion at T output frames (times i / fps, t = 0 included).

    vertices (T, n, 3) float32: input mesh frame, units and vertex order; faces (m, 3) int64;
    times (T,) s; q (T, k_q): the simulated coordinates (the latent chart: the instance's, with
    instance.decode(q=q[t]) frame t's exact decode, moved by the held part's rigid motion when points
    are held; the joints chart: joint angles in rad and displacements in m); energy (T, 3) J:
    kinetic, potential, total; work (T,) J done by the external forces since t = 0; dissipated (T,)
    J removed by damping, joint friction and joint stops; points (T, n_sim + e, 3) float32 metres:
    the simulation points (the mass-carrying ones, then the e massless contact and push points);
    trajectory: the solver's states (dynamics.integrate.Trajectory or joint_dynamics.JointTrajectory);
    summary: numbers for a report (docs/physics.md)."""

    vertices: np.ndarray
    faces: np.ndarray
    times: np.ndarray
    q: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    dissipated: np.ndarray
    points: np.ndarray
    trajectory: object
    summary: dict = field(default_factory=dict)
