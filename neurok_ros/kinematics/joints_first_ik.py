"""`neurok ik` through an articulation: its joint values first, then the learned deformation from there.

    fit = fit_joints_first(model, vertices, faces, observed, articulation, ik)
    fit.vertices  (n, 3) float64: the kept pose, the mesh's frame, units and vertex order
    fit.kept      "rest" (the mesh as given), "joints" (the joint pose, every part rigid) or "learned"
    fit.joints    the joint-space fit (joint_pose_fit.JointPoseFit), None without joints
    fit.ensemble  the learned fit (fit_ensemble.EnsembleFit), started from the joint pose

The joint values are fitted to the observed points (M, 3) first (joint_pose_fit; within the joints'
limits with IKConfig.hold_joint_limits, their full span otherwise), the learned fit
then starts from that pose, and of the three poses the one nearest the observed points by the fit's
own objective (observed_chamfer, on the same fresh samples of each) is kept: the result is never
farther from the observation than the mesh as given. Without joints (articulation None or
jointless) it is the learned fit alone, as before.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurok_ros.kinematics.fit_ensemble import EnsembleFit, fit_ensemble
from neurok_ros.kinematics.ik_config import IKConfig
from neurok_ros.kinematics.instance import EncodingConfig
from neurok_ros.kinematics.joint_pose_fit import JointPoseFit, fit_joint_pose, observed_chamfer

TIE = 1e-6  # relative: errors this close are a tie, which the pose earlier in rest, joints, learned wins


@dataclass
class JointsFirstIK:
    """See the module docstring."""

    vertices: np.ndarray
    kept: str
    joints: JointPoseFit | None
    ensemble: EnsembleFit


def fit_joints_first(model, vertices, faces, observed, articulation=None, ik: IKConfig = IKConfig(),
                     fits: int = 1, encoding: EncodingConfig = EncodingConfig()) -> JointsFirstIK:
    """See the module docstring; vertices (n, 3), faces (m, 3) and observed (M, 3) in one frame and units."""
    V = np.asarray(vertices, dtype=np.float64)
    joints = (fit_joint_pose(V, faces, articulation, observed, ik.partial, seed=ik.seed,
                             hold_limits=ik.hold_joint_limits)
              if articulation is not None and articulation.joints else None)
    ensemble = fit_ensemble(model, V if joints is None else joints.vertices, faces, observed, fits, encoding, ik)
    if joints is None:
        return JointsFirstIK(ensemble.vertices, "learned", None, ensemble)
    poses = {"rest": V, "joints": joints.vertices, "learned": ensemble.vertices}
    error = {name: observed_chamfer(pose, faces, observed, ik.partial, seed=ik.seed) for name, pose in poses.items()}
    kept = nearest_pose(error)
    return JointsFirstIK(poses[kept], kept, joints, ensemble)


def nearest_pose(errors: dict) -> str:
    """The name of the least of errors ({name: error}, simplest pose first: rest, joints, learned);
    errors within TIE of it are a tie, which the earlier name wins."""
    least = min(errors.values())
    return next(name for name, error in errors.items() if error <= least * (1.0 + TIE))
