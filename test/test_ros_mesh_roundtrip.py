"""Meshes through real ROS 2 pub/sub as visualization_msgs/Marker, and rejected markers."""
import array

import numpy as np
import pytest
import trimesh
from visualization_msgs.msg import Marker

from neurok_ros.errors import MeshError
from neurok_ros.ros.loopback import publish_and_receive
from neurok_ros.ros.mesh_marker import marker_to_mesh, mesh_to_marker, triangle_list_marker
from neurok_ros.ros.qos import MESH_QOS

pytestmark = pytest.mark.ros


@pytest.fixture(scope="module")
def torus():
    """10 000 vertices, 20 000 faces; coordinates exact in float32 (PLY stores float32)."""
    mesh = trimesh.creation.torus(0.2, 0.05, major_sections=100, minor_sections=100)
    V = np.asarray(mesh.vertices, dtype=np.float32).astype(np.float64)
    F = np.asarray(mesh.faces, dtype=np.int64)
    assert V.shape == (10000, 3) and F.shape == (20000, 3)
    return V, F


def _tetrahedron():
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
    F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.int64)
    return V, F


def test_mesh_resource_ply_arrives_identical(ros_context, torus):
    V, F = torus
    msg = mesh_to_marker(V, F, "object_frame")
    assert msg.type == Marker.MESH_RESOURCE
    assert msg.mesh_resource == "embedded://object.ply" and msg.mesh_file.filename == "object.ply"
    # TRANSIENT_LOCAL: a subscriber that appears after the publish still gets the mesh.
    got = publish_and_receive(Marker, msg, MESH_QOS, late_subscriber=True)
    assert got.header.frame_id == "object_frame"
    mesh = marker_to_mesh(got)
    assert mesh.source == "mesh_resource" and mesh.input_to_mesh is None
    np.testing.assert_array_equal(mesh.vertices, V)
    np.testing.assert_array_equal(mesh.faces, F)


def test_triangle_list_arrives_with_same_geometry_after_welding(ros_context, torus):
    V, F = torus
    msg = triangle_list_marker(V, F, "object_frame")
    assert msg.type == Marker.TRIANGLE_LIST and len(msg.points) == 3 * len(F)
    got = publish_and_receive(Marker, msg, MESH_QOS)
    mesh = marker_to_mesh(got)
    assert mesh.source == "triangle_list"
    assert mesh.vertices.shape == V.shape and mesh.faces.shape == F.shape
    # Same vertex set, same triangles (corner by corner), and the list-point map is consistent.
    np.testing.assert_array_equal(np.unique(mesh.vertices, axis=0), np.unique(V, axis=0))
    np.testing.assert_array_equal(mesh.vertices[mesh.faces], V[F])
    np.testing.assert_array_equal(mesh.vertices[mesh.input_to_mesh], V[F].reshape(-1, 3))


@pytest.mark.parametrize("fmt", ["obj", "stl", "off", "glb"])
def test_other_embedded_formats_decode(fmt):
    V, F = _tetrahedron()
    mesh = marker_to_mesh(mesh_to_marker(V, F, "f", embed_format=fmt, name="tet"))
    assert mesh.vertices.shape == (4, 3) and mesh.faces.shape == (4, 3)
    np.testing.assert_allclose(mesh.vertices[mesh.faces], V[F], atol=1e-6)


def test_pose_and_scale_are_applied():
    V, F = _tetrahedron()
    msg = mesh_to_marker(V, F, "f")
    msg.scale.x, msg.scale.y, msg.scale.z = 2.0, 3.0, 4.0
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = 1.0, -2.0, 0.5
    # 90 degrees about z: (x, y, z) -> (-y, x, z)
    msg.pose.orientation.z = msg.pose.orientation.w = np.sqrt(0.5)
    scaled = V * [2.0, 3.0, 4.0]
    expected = np.stack([-scaled[:, 1], scaled[:, 0], scaled[:, 2]], axis=1) + [1.0, -2.0, 0.5]
    np.testing.assert_allclose(marker_to_mesh(msg).vertices, expected, atol=1e-12)
    tri = triangle_list_marker(V, F, "f")
    tri.scale, tri.pose = msg.scale, msg.pose
    got = marker_to_mesh(tri)
    np.testing.assert_allclose(got.vertices[got.faces], expected[F], atol=1e-12)


def _rejected(msg) -> str:
    with pytest.raises(MeshError) as info:
        marker_to_mesh(msg)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_unsupported_marker_type_is_rejected():
    msg = Marker()
    msg.type = Marker.SPHERE
    assert "marker type SPHERE is not a mesh" in _rejected(msg)


def test_package_mesh_resource_is_rejected_without_fetching():
    msg = Marker()
    msg.type = Marker.MESH_RESOURCE
    msg.mesh_resource = "package://some_pkg/meshes/object.stl"
    text = _rejected(msg)
    assert "package://some_pkg/meshes/object.stl" in text and "not embedded" in text


def test_bad_mesh_markers_are_rejected():
    V, F = _tetrahedron()
    empty = mesh_to_marker(V, F, "f")
    empty.mesh_file.data = array.array("B")
    assert "no bytes" in _rejected(empty)

    garbage = mesh_to_marker(V, F, "f")
    garbage.mesh_file.data = array.array("B", b"definitely not a ply file")
    _rejected(garbage)

    unknown = mesh_to_marker(V, F, "f")
    unknown.mesh_resource, unknown.mesh_file.filename = "embedded://object.xyz", "object.xyz"
    assert "object.xyz" in _rejected(unknown)

    no_resource = mesh_to_marker(V, F, "f")
    no_resource.mesh_resource = ""
    assert "empty mesh_resource" in _rejected(no_resource)

    uneven = triangle_list_marker(V, F, "f")
    uneven.points = uneven.points[:-1]
    assert "11 points, not a multiple of 3" in _rejected(uneven)

    no_points = triangle_list_marker(V, F, "f")
    no_points.points = []
    assert "no points" in _rejected(no_points)

    deleting = mesh_to_marker(V, F, "f")
    deleting.action = Marker.DELETEALL
    assert "DELETEALL" in _rejected(deleting)

    flat = mesh_to_marker(V, F, "f")
    flat.scale.z = 0.0
    assert "scale" in _rejected(flat)


def test_nan_triangle_list_is_rejected():
    V, F = _tetrahedron()
    msg = triangle_list_marker(V, F, "f")
    msg.points[4].y = float("nan")
    _rejected(msg)
