"""The learned side as the node sees it: load the model once, encode a mesh, predict a motion.

The node never touches torch or the simulation directly; everything goes through NeurokBackend,
and the prediction is ONE call (`NeurokBackend.predict` -> neurok_ros.simulation.predict_motion).
Tests may hand the node any object with the same methods (encode, predict, fit_scan, warm_up).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class MotionResult:
    """What the node publishes: vertices (T, N, 3) float32 in the mesh frame and vertex order,
    times (T,) float32 s from the start; energy (T, 3) or None; timings {name: seconds};
    summary: extra facts for /diagnostics; joints: for a motion in joint coordinates, {"names": [J],
    "positions": (T, J) rad or m, "velocities": (T, J)}, else None."""

    vertices: np.ndarray
    times: np.ndarray
    energy: np.ndarray | None = None
    timings: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    joints: dict | None = None


def frame_times(duration: float, fps: float) -> np.ndarray:
    """Output times 0, 1/fps, ... up to duration (inclusive, within rounding)."""
    count = int(round(duration * fps)) + 1
    return np.arange(count, dtype=np.float64) / fps


class NeurokBackend:
    """model: a NeuROKModel in eval mode; info: facts for /diagnostics (checkpoint, device, ...)."""

    def __init__(self, model, info: dict):
        self.model = model
        self.info = info

    @classmethod
    def load(cls, checkpoint: str = "", device: str = "auto", threads: int = 0) -> "NeurokBackend":
        """Load the checkpoint ("" = the shipped default) on device (auto, cpu, cuda[:N])."""
        import torch

        from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT, load_default_model, resolve_device

        if threads > 0:
            torch.set_num_threads(int(threads))
        started = time.perf_counter()
        model, _ = load_default_model(checkpoint or None, device)
        info = {"checkpoint": str(checkpoint or DEFAULT_CHECKPOINT), "device": str(resolve_device(device)),
                "parameters": sum(p.numel() for p in model.parameters()),
                "articulation_head": str(getattr(model, "articulation_head_file", "none")),
                "load_s": time.perf_counter() - started}
        return cls(model, info)

    def encode(self, vertices: np.ndarray, faces: np.ndarray):
        """A NeuROKInstance of the mesh (vertices in metres, any frame), its parts and joints read
        (neurok articulate) and kept on it as `articulation`, so actions on it do not wait for them
        (nor for the latent chart's subspace, when there are no joints)."""
        from neurok_ros.articulation.readout import read_articulation
        from neurok_ros.kinematics.instance import encode_mesh

        instance = encode_mesh(self.model, vertices, faces)
        instance.articulation = read_articulation(instance)
        if not instance.articulation.joints:
            _ = instance.subspace  # the latent chart's, computed now rather than on the first action
        return instance

    def predict(self, instance, conditions, settings, should_stop=None, progress=None) -> MotionResult:
        """THE prediction call: the motion of `instance` under `conditions` (ContactConditions, mesh
        frame) with the node's current settings (NodeSettings): in joint coordinates when the mesh
        has joints and the articulation parameter is auto, else in the learned latent chart.
        should_stop, progress: predict_motion's (a PredictMotion goal's cancel and feedback);
        neurok_ros.errors.Cancelled once should_stop() returns True."""
        from neurok_ros.simulation.predict import predict_motion

        articulation = getattr(instance, "articulation", None) if settings.articulation == "auto" else None
        prediction = predict_motion(instance, conditions, simulation_settings(settings), articulation=articulation,
                                    should_stop=should_stop, progress=progress)
        summary = dict(prediction.summary or {})
        seconds = summary.pop("seconds", {}) or {}
        # "encode" there is the instance's original encoding time, whatever the cache did: leave it out.
        timings = {f"{k}_s": float(v) for k, v in seconds.items() if k not in ("encode", "total")}
        facts = {k: v for k, v in summary.items() if isinstance(v, (int, float, str, bool)) and not k.endswith("_note")}
        joints = None
        if summary.get("chart") == "joints":
            joints = {"names": list(summary["joints"]), "positions": np.asarray(prediction.q),
                      "velocities": np.asarray(prediction.trajectory.qdot)}
        return MotionResult(np.asarray(prediction.vertices, dtype=np.float32),
                            np.asarray(prediction.times, dtype=np.float32),
                            np.asarray(prediction.energy), timings, facts, joints)

    def description(self, instance) -> str:
        """The URDF of the instance's parts and joints (neurok articulate), its link meshes written
        under the system's temporary folder and referenced by file:// URIs."""
        import hashlib
        import tempfile
        from pathlib import Path

        from neurok_ros.articulation.articulation import Articulation
        from neurok_ros.articulation.urdf import write_urdf

        V, F = np.asarray(instance.vertices), np.asarray(instance.faces)
        articulation = getattr(instance, "articulation", None) or Articulation(np.zeros(len(V), np.int64), [], "soft")
        digest = hashlib.sha1(V.tobytes() + F.tobytes()).hexdigest()[:16]
        folder = Path(tempfile.gettempdir()) / "neurok_ros" / "descriptions" / digest
        path = write_urdf(folder / "object.urdf", V, F, articulation, file_uris=True)
        return path.read_text()

    def fit_scan(self, instance, vertices: np.ndarray, faces: np.ndarray, points: np.ndarray, settings):
        """The pose of `instance` (encoded from vertices, faces) that observed points (M, 3), mesh
        frame, show, with the node's observation settings: a kinematics.scan_fit.JointsFirstFit, the
        instance's joint values fitted first when observation_joints is set and it has joints."""
        from neurok_ros.kinematics.instance import encode_mesh
        from neurok_ros.kinematics.scan_fit import fit_scan_through_joints

        articulation = getattr(instance, "articulation", None) if settings.observation_joints else None
        return fit_scan_through_joints(lambda posed: encode_mesh(self.model, posed, faces), vertices, faces, points,
                                       articulation, settings.observation_partial, settings.observation_points,
                                       support_band=settings.observation_support_band,
                                       trim=settings.observation_trim,
                                       rigid_pieces=settings.observation_rigid_pieces, instance=instance)

    def warm_up(self, settings) -> float:
        """Encode a small sphere and simulate it for two frames; returns the seconds taken."""
        import trimesh

        from neurok_ros.dynamics.contact_conditions import ContactConditions

        started = time.perf_counter()
        sphere = trimesh.creation.icosphere(subdivisions=1, radius=0.1)
        instance = self.encode(np.asarray(sphere.vertices), np.asarray(sphere.faces))
        push = ContactConditions(positions=[[0.0, 0.0, 0.1]], velocities=[[0.0, 0.0, -0.1]])
        short = _replace(settings, duration=1.0 / settings.fps, simulation_points=min(settings.simulation_points, 64))
        self.predict(instance, push, short)
        return time.perf_counter() - started


def _replace(settings, **changes):
    from dataclasses import replace

    return replace(settings, **changes)


def simulation_settings(settings):
    """neurok_ros.simulation SimulationSettings from the node's NodeSettings (the one place they
    meet): config/simulation.yaml with the node's simulation parameters on top."""
    from neurok_ros.simulation.settings import FIELDS, settings_from

    # Only fields the simulation knows (test_ros_node checks that the two config files agree).
    return settings_from({k: v for k, v in settings.simulation_overrides().items() if k in FIELDS})
