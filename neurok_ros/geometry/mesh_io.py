"""Read and write triangle meshes (obj, ply, stl, glb/gltf, off) as plain arrays.

Every mesh comes back as V (n, 3) float64 in the file's frame and units and F (m, 3) int64, checked
by `validate_mesh_arrays`. Vertex order is the file's order (no merging or reordering), except for
STL, which stores a triangle soup: its coincident corners are welded in order of first occurrence.
A scene (glb/gltf, multi-object obj) is flattened: every triangle mesh it holds, in node order, with
its node transform applied. A triangle PLY is read without trimesh (ply_reader.py), anything else
through it.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from neurok_ros.errors import MeshError
from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays, weld_vertices
from neurok_ros.geometry.ply_reader import read_triangle_ply

MESH_FILE_TYPES = ("obj", "ply", "stl", "glb", "gltf", "off")

# Loader options that keep the file's vertex order and do not split the mesh by material/texture.
_LOADER_OPTIONS = {
    "obj": {"maintain_order": True, "group_material": False, "skip_materials": True},
    "ply": {"fix_texture": False, "skip_materials": True},
}


def _normalise_file_type(file_type: str) -> str:
    kind = str(file_type).lower().lstrip(".")
    if kind == "stl_ascii":
        kind = "stl"
    if kind not in MESH_FILE_TYPES:
        raise MeshError(f"unsupported mesh format {file_type!r}; expected one of "
                        f"{', '.join(MESH_FILE_TYPES)}")
    return kind


def _scene_to_arrays(scene) -> tuple[np.ndarray, np.ndarray]:
    """All triangle meshes of a trimesh Scene, node transforms applied, concatenated."""
    import trimesh

    vertex_blocks, face_blocks, offset = [], [], 0
    for node in scene.graph.nodes_geometry:
        transform, geometry_name = scene.graph[node]
        geometry = scene.geometry.get(geometry_name)
        if not isinstance(geometry, trimesh.Trimesh) or len(geometry.faces) == 0:
            continue
        V = np.asarray(geometry.vertices, dtype=np.float64)
        T = np.asarray(transform, dtype=np.float64)
        V = V @ T[:3, :3].T + T[:3, 3]
        vertex_blocks.append(V)
        face_blocks.append(np.asarray(geometry.faces, dtype=np.int64) + offset)
        offset += len(V)
    if not face_blocks:
        kinds = sorted({type(g).__name__ for g in scene.geometry.values()}) or ["no geometry"]
        raise MeshError(f"no triangles (found {', '.join(kinds)})")
    return np.concatenate(vertex_blocks), np.concatenate(face_blocks)


def _read(file_obj, file_type: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    arrays = read_triangle_ply(file_obj.getvalue()) if file_type == "ply" else None
    try:
        V, F = arrays if arrays is not None else _read_with_trimesh(file_obj, file_type)
    except MeshError as exc:
        raise MeshError(f"could not read {name} as {file_type.upper()}: {exc}") from None
    except Exception as exc:  # trimesh raises many kinds of errors on malformed input
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MeshError(f"could not read {name} as {file_type.upper()}: {reason}") from None
    try:
        V, F = validate_mesh_arrays(V, F)
        if file_type == "stl":
            V, F, _ = weld_vertices(V, F)
    except MeshError as exc:
        raise MeshError(f"{name}: {exc}") from None
    return V, F


def _read_with_trimesh(file_obj, file_type: str) -> tuple[np.ndarray, np.ndarray]:
    import trimesh

    options = dict(_LOADER_OPTIONS.get(file_type, {}))
    return _scene_to_arrays(trimesh.load_scene(file_obj, file_type=file_type, process=False, **options))


def load_mesh(path) -> tuple[np.ndarray, np.ndarray]:
    """Load a mesh file: V (n, 3) float64 (file units), F (m, 3) int64.

    The format comes from the suffix. Raises FileNotFoundError for a missing file and MeshError
    (naming the file) for an unknown format, unreadable content, or no usable triangles.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    try:
        file_type = _normalise_file_type(path.suffix)
    except MeshError as exc:
        raise MeshError(f"{path}: {exc}") from None
    if file_type == "gltf":  # may reference buffers next to it: let trimesh resolve them
        return _read(os.fspath(path), file_type, str(path))
    with open(path, "rb") as handle:
        data = handle.read()
    if not data:
        raise MeshError(f"{path}: file is empty")
    return _read(io.BytesIO(data), file_type, str(path))


def load_mesh_bytes(data: bytes, file_type: str) -> tuple[np.ndarray, np.ndarray]:
    """Load a mesh from the bytes of a file of type `file_type` ("ply", "obj", "stl", "glb", "off").

    Returns V (n, 3) float64, F (m, 3) int64; raises MeshError on unreadable bytes.
    """
    file_type = _normalise_file_type(file_type)
    if not data:
        raise MeshError(f"could not read mesh bytes as {file_type.upper()}: no data")
    return _read(io.BytesIO(bytes(data)), file_type, "mesh bytes")


def mesh_to_bytes(vertices, faces, file_type: str = "ply") -> bytes:
    """Encode a mesh as file bytes: binary PLY by default; "obj", "stl" (binary), "off", "glb" too."""
    import trimesh

    V, F = validate_mesh_arrays(vertices, faces)
    file_type = _normalise_file_type(file_type)
    if file_type == "gltf":
        raise MeshError("cannot encode gltf as a single byte string; use glb")
    mesh = trimesh.Trimesh(vertices=V, faces=F, process=False)
    if file_type == "ply":
        data = mesh.export(file_type="ply", encoding="binary")
    elif file_type == "obj":
        data = mesh.export(file_type="obj", include_normals=False, include_texture=False)
    else:
        data = mesh.export(file_type=file_type)
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def save_mesh(path, vertices, faces) -> None:
    """Write a mesh file; the format comes from the suffix (ply, obj, stl, off, glb)."""
    path = Path(path)
    data = mesh_to_bytes(vertices, faces, path.suffix)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
