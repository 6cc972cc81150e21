"""Animated glTF 2.0 binary (.glb) of a deforming mesh: one morph target per frame, played by a
weights animation. Written by hand (struct + json), no exporter dependency.

Layout: the base mesh is frame 0 (POSITION, uint32 indices); frame t >= 1 is morph target t - 1
holding the displacement frame_t - frame_0; the animation's sampler has the frame times as input
and, per frame, the one-hot weight vector of its target (all zeros at frame 0) as output, with
LINEAR interpolation, so players blend neighbouring frames. Blender imports the targets as shape
keys with an action; three.js (GLTFLoader + AnimationMixer) plays the clip.

Vertex data is written in the mesh's own frame and units (as in traj.npz); glTF's convention is
+Y up, so a Z-up mesh appears lying on its back unless the viewer converts (Blender's importer does
not rotate a Z-up file back). Normals are not written: players compute flat normals (glTF 2.0,
3.7.2.1).
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

GLB_MAGIC = 0x46546C67  # "glTF"
CHUNK_JSON = 0x4E4F534A  # "JSON"
CHUNK_BIN = 0x004E4942  # "BIN\0"
FLOAT, UNSIGNED_INT = 5126, 5125
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963


class _Builder:
    """Accumulates the binary buffer, buffer views and accessors."""

    def __init__(self):
        self.blob = bytearray()
        self.views: list[dict] = []
        self.accessors: list[dict] = []

    def add(self, array: np.ndarray, kind: str, component: int, target: int | None = None,
            bounds: bool = False) -> int:
        """Append `array` (4-byte aligned) as one buffer view and one accessor; returns its index."""
        data = np.ascontiguousarray(array, dtype=np.float32 if component == FLOAT else np.uint32)
        while len(self.blob) % 4:
            self.blob.append(0)
        view = {"buffer": 0, "byteOffset": len(self.blob), "byteLength": data.nbytes}
        if target is not None:
            view["target"] = target
        self.blob.extend(data.tobytes())
        self.views.append(view)
        width = {"SCALAR": 1, "VEC3": 3}[kind]
        accessor = {"bufferView": len(self.views) - 1, "componentType": component,
                    "count": int(data.size // width), "type": kind}
        if bounds:
            flat = data.reshape(-1, width)
            accessor["min"] = [float(v) for v in flat.min(axis=0)]
            accessor["max"] = [float(v) for v in flat.max(axis=0)]
        self.accessors.append(accessor)
        return len(self.accessors) - 1


def animated_gltf(frames, faces, times, name: str = "neurok", colour=(0.44, 0.62, 0.85, 1.0)
                  ) -> tuple[dict, bytes]:
    """(glTF JSON dict, binary buffer) for frames (T, n, 3), faces (m, 3) and times (T,) seconds."""
    frames = np.asarray(frames, dtype=np.float32)
    faces = np.asarray(faces, dtype=np.int64)
    times = np.asarray(times, dtype=np.float32).reshape(-1)
    if frames.ndim != 3 or frames.shape[2] != 3 or len(frames) == 0:
        raise ValueError(f"frames must have shape (T, n, 3) with T >= 1, got {frames.shape}")
    if times.shape != (len(frames),) or np.any(np.diff(times) <= 0):
        raise ValueError(f"times must be (T={len(frames)},) strictly increasing, got {times.shape}")
    if faces.ndim != 2 or faces.shape[1] != 3 or faces.min() < 0 or faces.max() >= frames.shape[1]:
        raise ValueError("faces must be (m, 3) indices into the frames' vertices")
    b = _Builder()
    indices = b.add(faces.reshape(-1), "SCALAR", UNSIGNED_INT, ELEMENT_ARRAY_BUFFER)
    base = b.add(frames[0], "VEC3", FLOAT, ARRAY_BUFFER, bounds=True)
    count = len(frames) - 1
    targets = [{"POSITION": b.add(frames[t] - frames[0], "VEC3", FLOAT, ARRAY_BUFFER, bounds=True)}
               for t in range(1, len(frames))]
    primitive = {"attributes": {"POSITION": base}, "indices": indices, "material": 0, "mode": 4}
    mesh = {"name": name, "primitives": [primitive]}
    gltf = {
        "asset": {"version": "2.0", "generator": "neurok_ros gltf_animation"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": name, "mesh": 0}],
        "meshes": [mesh],
        "materials": [{"name": "neurok", "doubleSided": True,
                       "pbrMetallicRoughness": {"baseColorFactor": [float(c) for c in colour],
                                                "metallicFactor": 0.0, "roughnessFactor": 0.8}}],
    }
    if count:
        primitive["targets"] = targets
        mesh["weights"] = [0.0] * count
        mesh["extras"] = {"targetNames": [f"frame_{t:04d}" for t in range(1, len(frames))]}
        weights = np.zeros((len(frames), count), dtype=np.float32)
        weights[np.arange(1, len(frames)), np.arange(count)] = 1.0
        time_accessor = b.add(times, "SCALAR", FLOAT, bounds=True)
        weight_accessor = b.add(weights.reshape(-1), "SCALAR", FLOAT)
        gltf["animations"] = [{
            "name": "motion",
            "samplers": [{"input": time_accessor, "output": weight_accessor, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}],
        }]
    while len(b.blob) % 4:
        b.blob.append(0)
    gltf["buffers"] = [{"byteLength": len(b.blob)}]
    gltf["bufferViews"] = b.views
    gltf["accessors"] = b.accessors
    return gltf, bytes(b.blob)


def glb_bytes(gltf: dict, blob: bytes) -> bytes:
    """The GLB container: 12-byte header, JSON chunk (space-padded), BIN chunk (zero-padded)."""
    text = json.dumps(gltf, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    total = 12 + 8 + len(text) + 8 + len(blob)
    return (struct.pack("<III", GLB_MAGIC, 2, total) + struct.pack("<II", len(text), CHUNK_JSON) + text
            + struct.pack("<II", len(blob), CHUNK_BIN) + blob)


def write_animated_glb(path, frames, faces, times, name: str = "neurok") -> Path:
    """Write frames (T, n, 3), faces (m, 3), times (T,) s as an animated .glb; returns the path."""
    gltf, blob = animated_gltf(frames, faces, times, name)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(glb_bytes(gltf, blob))
    return path


def read_glb(path) -> tuple[dict, bytes]:
    """(JSON dict, BIN chunk) of a .glb file; ValueError when it is not a glTF 2.0 binary."""
    data = Path(path).read_bytes()
    if len(data) < 20:
        raise ValueError(f"{path}: too short for a GLB file")
    magic, version, length = struct.unpack_from("<III", data, 0)
    if magic != GLB_MAGIC or version != 2 or length != len(data):
        raise ValueError(f"{path}: not a glTF 2.0 binary (magic {magic:#x}, version {version}, length {length})")
    json_length, json_type = struct.unpack_from("<II", data, 12)
    if json_type != CHUNK_JSON:
        raise ValueError(f"{path}: first chunk is not JSON")
    gltf = json.loads(data[20:20 + json_length])
    offset = 20 + json_length
    blob = b""
    if offset < len(data):
        bin_length, bin_type = struct.unpack_from("<II", data, offset)
        if bin_type != CHUNK_BIN:
            raise ValueError(f"{path}: second chunk is not BIN")
        blob = data[offset + 8:offset + 8 + bin_length]
    return gltf, blob


def accessor_array(gltf: dict, blob: bytes, index: int) -> np.ndarray:
    """The data of accessor `index` as a numpy array (count,) or (count, 3)."""
    accessor = gltf["accessors"][index]
    view = gltf["bufferViews"][accessor["bufferView"]]
    dtype = np.float32 if accessor["componentType"] == FLOAT else np.uint32
    width = {"SCALAR": 1, "VEC3": 3}[accessor["type"]]
    start = view.get("byteOffset", 0) + accessor.get("byteOffset", 0)
    data = np.frombuffer(blob, dtype=dtype, count=accessor["count"] * width, offset=start)
    return data if width == 1 else data.reshape(-1, width)
