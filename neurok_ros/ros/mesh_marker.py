"""Triangle mesh <-> visualization_msgs/Marker (the ~/mesh topic).

Accepted markers (action ADD):
- MESH_RESOURCE with the file embedded: mesh_resource = "embedded://<name>.<ext>",
  mesh_file.filename = "<name>.<ext>", mesh_file.data = the file bytes; ext: ply obj stl glb off.
  Nothing is ever fetched: package://, file://, http:// resources are rejected.
- TRIANGLE_LIST: points = 3 corners per triangle; coincident corners are welded on arrival and
  the map from list point to welded vertex is returned.
Decoded vertices are in header.frame_id: marker.scale (per axis) and then marker.pose are applied,
v_header = R(pose.orientation) @ (scale * v) + pose.position, as RViz draws them. Encoded markers
carry identity pose and scale 1, so vertices travel unchanged.
"""
import array
from typing import NamedTuple, Optional

import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker

from neurok_ros.errors import MeshError
from neurok_ros.geometry.dual_quaternion import quaternion_to_matrix
from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays, weld_vertices
from neurok_ros.geometry.mesh_io import load_mesh_bytes, mesh_to_bytes

EMBEDDED_PREFIX = "embedded://"
EMBEDDED_FORMATS = ("ply", "obj", "stl", "glb", "off")
_TYPE_NAMES = {getattr(Marker, n): n for n in (
    "ARROW", "CUBE", "SPHERE", "CYLINDER", "LINE_STRIP", "LINE_LIST", "CUBE_LIST", "SPHERE_LIST",
    "POINTS", "TEXT_VIEW_FACING", "MESH_RESOURCE", "TRIANGLE_LIST", "ARROW_STRIP")}
_ACTION_NAMES = {Marker.ADD: "ADD", Marker.DELETE: "DELETE", Marker.DELETEALL: "DELETEALL"}


class MeshFromMarker(NamedTuple):
    """A mesh decoded from a Marker.

    vertices: (n, 3) float64, metres in the marker's header.frame_id.
    faces: (m, 3) int64.
    input_to_mesh: (3 m_in,) int64, TRIANGLE_LIST point -> welded vertex; None for a mesh file.
    source: "mesh_resource" or "triangle_list".
    """

    vertices: np.ndarray
    faces: np.ndarray
    input_to_mesh: Optional[np.ndarray]
    source: str


def _base_marker(frame_id: str, marker_type: int) -> Marker:
    m = Marker()
    m.header.frame_id = frame_id
    m.ns = "neurok"
    m.id = 0
    m.type = marker_type
    m.action = Marker.ADD
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = 1.0
    m.color.r, m.color.g, m.color.b, m.color.a = 0.85, 0.55, 0.25, 1.0
    return m


def mesh_to_marker(vertices, faces, frame_id: str, *, embed_format: str = "ply",
                   name: str = "object") -> Marker:
    """MESH_RESOURCE marker embedding V (n, 3) metres, F (m, 3) as a file of `embed_format`."""
    fmt = embed_format.lower().lstrip(".")
    if fmt not in EMBEDDED_FORMATS:
        raise MeshError(f"cannot embed format {embed_format!r}; "
                        f"use one of {', '.join(EMBEDDED_FORMATS)}")
    data = mesh_to_bytes(vertices, faces, fmt)
    m = _base_marker(frame_id, Marker.MESH_RESOURCE)
    m.mesh_resource = f"{EMBEDDED_PREFIX}{name}.{fmt}"
    m.mesh_file.filename = f"{name}.{fmt}"
    m.mesh_file.data = array.array("B", data)
    m.mesh_use_embedded_materials = False
    return m


def file_to_marker(path, frame_id: str) -> Marker:
    """MESH_RESOURCE marker embedding a mesh file's bytes as they are (no re-encoding)."""
    import os

    name = os.path.basename(str(path))
    fmt = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if fmt not in EMBEDDED_FORMATS:
        raise MeshError(f"cannot embed {name!r}: the file name must end in "
                        f"{', '.join('.' + f for f in EMBEDDED_FORMATS)}")
    with open(path, "rb") as f:
        data = f.read()
    m = _base_marker(frame_id, Marker.MESH_RESOURCE)
    m.mesh_resource = f"{EMBEDDED_PREFIX}{name}"
    m.mesh_file.filename = name
    m.mesh_file.data = array.array("B", data)
    m.mesh_use_embedded_materials = False
    return m


def triangle_list_marker(vertices, faces, frame_id: str) -> Marker:
    """TRIANGLE_LIST marker: 3 points per face of F (m, 3), corners from V (n, 3) in metres."""
    V, F = validate_mesh_arrays(vertices, faces)
    m = _base_marker(frame_id, Marker.TRIANGLE_LIST)
    m.points = [Point(x=x, y=y, z=z) for x, y, z in V[F].reshape(-1, 3).tolist()]
    return m


def _quaternion_matrix(q) -> np.ndarray:
    """ROS (x, y, z, w) quaternion, normalised, -> (3, 3) rotation; MeshError if it is not one."""
    q = np.asarray(q, dtype=np.float64)
    norm = float(np.linalg.norm(q))
    if not np.isfinite(norm) or norm < 1e-12:
        raise MeshError(f"marker pose orientation is not a rotation: quaternion {tuple(q)}")
    x, y, z, w = q / norm
    return quaternion_to_matrix(np.array([w, x, y, z]))


def _to_header_frame(V: np.ndarray, marker: Marker) -> np.ndarray:
    s = np.array([marker.scale.x, marker.scale.y, marker.scale.z])
    p = marker.pose.position
    o = marker.pose.orientation
    t = np.array([p.x, p.y, p.z])
    q = (o.x, o.y, o.z, o.w)
    if not (np.all(np.isfinite(s)) and np.all(s != 0)):
        raise MeshError(f"marker scale {tuple(s)} has a zero or non-finite component; use 1, 1, 1")
    if not np.all(np.isfinite(t)):
        raise MeshError(f"marker pose position {tuple(t)} is not finite")
    if np.all(s == 1) and np.all(t == 0) and q == (0.0, 0.0, 0.0, 1.0):
        return V
    return (V * s) @ _quaternion_matrix(q).T + t


def _embedded_format(marker: Marker) -> str:
    resource = marker.mesh_resource
    if not resource:
        raise MeshError("MESH_RESOURCE marker has an empty mesh_resource; "
                        "use embedded://<name>.ply with the bytes in mesh_file")
    if not resource.startswith(EMBEDDED_PREFIX):
        raise MeshError(f"mesh_resource {resource!r} is not embedded; nothing is fetched: "
                        "send the file bytes in mesh_file with mesh_resource embedded://<name>.ply")
    name = marker.mesh_file.filename or resource[len(EMBEDDED_PREFIX):]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext not in EMBEDDED_FORMATS:
        raise MeshError(f"cannot tell the mesh format of {name!r}: the file name must end in "
                        f"{', '.join('.' + f for f in EMBEDDED_FORMATS)}")
    return ext


def marker_to_mesh(marker: Marker) -> MeshFromMarker:
    """Decode a MESH_RESOURCE (embedded) or TRIANGLE_LIST marker; MeshError with the reason."""
    if marker.action != Marker.ADD:
        action = _ACTION_NAMES.get(marker.action, str(marker.action))
        raise MeshError(f"marker action {action} carries no mesh; send an ADD marker")
    if marker.type == Marker.MESH_RESOURCE:
        fmt = _embedded_format(marker)
        data = marker.mesh_file.data
        if len(data) == 0:
            raise MeshError(
                f"embedded mesh {marker.mesh_resource!r} has no bytes in mesh_file.data")
        V, F = load_mesh_bytes(bytes(data), fmt)
        return MeshFromMarker(_to_header_frame(V, marker), F, None, "mesh_resource")
    if marker.type == Marker.TRIANGLE_LIST:
        n = len(marker.points)
        if n == 0:
            raise MeshError("TRIANGLE_LIST marker has no points")
        if n % 3:
            raise MeshError(f"TRIANGLE_LIST marker has {n} points, not a multiple of 3")
        corners = np.array([(p.x, p.y, p.z) for p in marker.points], dtype=np.float64)
        soup = np.arange(n, dtype=np.int64).reshape(-1, 3)
        V, F, point_to_vertex = weld_vertices(corners, soup)
        return MeshFromMarker(_to_header_frame(V, marker), F, point_to_vertex, "triangle_list")
    kind = _TYPE_NAMES.get(marker.type, str(marker.type))
    raise MeshError(
        f"marker type {kind} is not a mesh; send MESH_RESOURCE (embedded) or TRIANGLE_LIST")
