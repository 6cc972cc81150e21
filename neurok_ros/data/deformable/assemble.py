"""Turn a flex recording into a dataset Instance (surface mesh, frames, Kabsch dual quaternions)."""
from __future__ import annotations

import numpy as np

from neurok_ros.data.deformable.kabsch_fit import fit_vertex_dual_quaternions
from neurok_ros.data.deformable.mujoco_flex import FlexRecording
from neurok_ros.data.instance_format import Instance

GENERATOR_VERSION = "1"


def plain(value):
    """JSON-friendly copy of generator parameters (numpy scalars/arrays -> Python numbers/lists)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return round(float(value), 9)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def recording_to_instance(recording: FlexRecording, category: str, kind: str, seed: int,
                          params: dict) -> Instance:
    """Instance of kind "elastic" or "cloth" from a recording; generator = {name, version, seed, params}."""
    dual_quaternions = fit_vertex_dual_quaternions(recording.rest, recording.frames, recording.faces)
    return Instance(
        category=category,
        kind=kind,
        rest_vertices=recording.rest,
        faces=recording.faces,
        frames=recording.frames,
        times=recording.times,
        vertex_dual_quaternions=dual_quaternions,
        pinned=recording.pinned,
        generator={"name": category, "version": GENERATOR_VERSION, "seed": int(seed), "params": plain(params)},
    )
