"""Mesh validation, cleaning, welding and reading errors."""
import numpy as np
import pytest
import trimesh

from neurok_ros.errors import MeshError
from neurok_ros.geometry.mesh_cleaning import clean_mesh, validate_mesh_arrays, weld_vertices
from neurok_ros.geometry.mesh_io import load_mesh, load_mesh_bytes, mesh_to_bytes, save_mesh

pytestmark = pytest.mark.unit

TETRA_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
TETRA_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.int64)


@pytest.mark.parametrize(
    "vertices, faces, words",
    [
        (np.zeros((0, 3)), TETRA_F, ["empty", "no vertices"]),
        (TETRA_V, np.zeros((0, 3), dtype=np.int64), ["empty", "no faces"]),
        (TETRA_V[:, :2], TETRA_F, ["shape"]),
        (TETRA_V, TETRA_F[:, :2], ["shape", "triangles"]),
        (np.where(np.arange(12).reshape(4, 3) == 7, np.nan, TETRA_V), TETRA_F, ["vertex 2", "not finite"]),
        (np.where(np.arange(12).reshape(4, 3) == 3, np.inf, TETRA_V), TETRA_F, ["vertex 1", "not finite"]),
        (TETRA_V, np.vstack([TETRA_F, [[0, 1, 9]]]), ["index 9", "4 vertices"]),
        (TETRA_V, np.vstack([TETRA_F, [[0, -1, 2]]]), ["negative", "-1"]),
        (TETRA_V, TETRA_F + 0.5, ["integer"]),
    ],
)
def test_invalid_arrays_name_the_problem(vertices, faces, words):
    with pytest.raises(MeshError) as info:
        validate_mesh_arrays(vertices, faces)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_valid_arrays_come_back_typed():
    V, F = validate_mesh_arrays(TETRA_V.astype(np.float32).tolist(), TETRA_F.astype(np.int32))
    assert V.dtype == np.float64 and V.shape == (4, 3)
    assert F.dtype == np.int64 and F.shape == (4, 3)


@pytest.mark.parametrize("file_type", ["ply", "obj", "stl", "glb", "off"])
def test_unreadable_bytes_raise_mesh_error(file_type):
    with pytest.raises(MeshError) as info:
        load_mesh_bytes(b"\x00\x17 this is not a mesh \xff" * 7, file_type)
    message = str(info.value)
    assert f"could not read mesh bytes as {file_type.upper()}" in message
    assert "\n" not in message


def test_unreadable_and_missing_files(tmp_path):
    bad = tmp_path / "broken.ply"
    bad.write_bytes(b"ply\nformat ascii 1.0\nelement vertex 3\nend_header\n1 2\n")
    with pytest.raises(MeshError, match="broken.ply"):
        load_mesh(bad)
    cloud = tmp_path / "cloud.ply"
    cloud.write_bytes(trimesh.PointCloud(np.random.default_rng(0).random((20, 3))).export(file_type="ply"))
    with pytest.raises(MeshError, match="no triangles"):
        load_mesh(cloud)
    with pytest.raises(MeshError, match="empty"):
        (tmp_path / "empty.obj").write_bytes(b"")
        load_mesh(tmp_path / "empty.obj")
    with pytest.raises(FileNotFoundError):
        load_mesh(tmp_path / "missing.obj")


@pytest.mark.parametrize("file_type", ["ply", "obj", "off", "glb"])
def test_round_trip_keeps_vertex_order(tmp_path, file_type):
    sphere = trimesh.creation.icosphere(subdivisions=2)
    order = np.random.default_rng(2).permutation(len(sphere.vertices))
    V = sphere.vertices[order]
    F = np.argsort(order)[sphere.faces]
    V_back, F_back = load_mesh_bytes(mesh_to_bytes(V, F, file_type), file_type)
    np.testing.assert_allclose(V_back, V, atol=1e-6)
    np.testing.assert_array_equal(F_back, F)
    path = tmp_path / f"mesh.{file_type}"
    save_mesh(path, V, F)
    V_file, F_file = load_mesh(path)
    np.testing.assert_allclose(V_file, V, atol=1e-6)
    np.testing.assert_array_equal(F_file, F)


def test_stl_is_welded_and_scene_transforms_applied(tmp_path):
    sphere = trimesh.creation.icosphere(subdivisions=2)
    V, F = load_mesh_bytes(mesh_to_bytes(sphere.vertices, sphere.faces, "stl"), "stl")
    assert V.shape == sphere.vertices.shape and F.shape == sphere.faces.shape
    np.testing.assert_allclose(V[F], sphere.vertices[sphere.faces], atol=1e-6)

    scene = trimesh.Scene()
    scene.add_geometry(trimesh.creation.box(), node_name="a")
    scene.add_geometry(trimesh.creation.box(), node_name="b",
                       transform=trimesh.transformations.translation_matrix([5.0, 0.0, 0.0]))
    path = tmp_path / "scene.glb"
    scene.export(path)
    V, F = load_mesh(path)
    assert V.shape == (16, 3) and F.shape == (24, 3)
    np.testing.assert_allclose(V.max(axis=0), [5.5, 0.5, 0.5])
    np.testing.assert_allclose(V.min(axis=0), [-0.5, -0.5, -0.5])


def test_clean_removes_degenerate_and_duplicate_faces_and_unused_vertices():
    # vertices 4 and 6 are unused; vertex 5 only appears in degenerate faces
    V = np.vstack([TETRA_V, [[9.0, 9.0, 9.0]], [[0.5, 0.0, 0.0]], [[7.0, 7.0, 7.0]]])
    F = np.array([
        [0, 2, 1],
        [0, 1, 3],
        [1, 0, 3],   # duplicate of face 1, flipped
        [0, 0, 2],   # repeated index
        [0, 5, 1],   # collinear: zero area
        [0, 3, 2],
        [3, 2, 0],   # duplicate of face 5, rotated
        [1, 2, 3],
        [2, 1, 0],   # duplicate of face 0, flipped
    ])
    clean = clean_mesh(V, F)
    np.testing.assert_array_equal(clean.kept_vertices, [0, 1, 2, 3])
    np.testing.assert_array_equal(clean.input_to_clean, [0, 1, 2, 3, -1, -1, -1])
    np.testing.assert_array_equal(clean.faces, TETRA_F)
    np.testing.assert_array_equal(clean.vertices, TETRA_V)
    assert clean.vertices.dtype == np.float64 and clean.faces.dtype == np.int64


def test_clean_index_maps_after_dropping_leading_vertices():
    V = np.vstack([[[5.0, 5.0, 5.0]], [[6.0, 6.0, 6.0]], TETRA_V])
    clean = clean_mesh(V, TETRA_F + 2)
    np.testing.assert_array_equal(clean.kept_vertices, [2, 3, 4, 5])
    np.testing.assert_array_equal(clean.input_to_clean, [-1, -1, 0, 1, 2, 3])
    np.testing.assert_array_equal(clean.vertices[clean.faces], V[TETRA_F + 2])
    np.testing.assert_array_equal(V[clean.kept_vertices], clean.vertices)


def test_clean_mesh_with_only_degenerate_faces_is_an_error():
    V = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], dtype=float)
    with pytest.raises(MeshError, match="degenerate"):
        clean_mesh(V, [[0, 1, 2], [0, 0, 1]])


def test_weld_triangle_soup_recovers_vertex_count():
    sphere = trimesh.creation.icosphere(subdivisions=5)  # 10242 vertices, 20480 faces
    V, F = np.asarray(sphere.vertices), np.asarray(sphere.faces)
    assert len(V) > 10_000
    soup_V = V[F].reshape(-1, 3)
    soup_F = np.arange(len(soup_V)).reshape(-1, 3)
    welded_V, welded_F, input_to_welded = weld_vertices(soup_V, soup_F)
    assert len(welded_V) == len(V)
    assert welded_F.shape == F.shape
    np.testing.assert_array_equal(welded_V[input_to_welded], soup_V)
    np.testing.assert_array_equal(welded_V[welded_F], V[F])
    # first occurrence order: welded vertex i first appears before welded vertex i + 1
    first_seen = np.unique(input_to_welded, return_index=True)[1]
    assert np.all(np.diff(first_seen) > 0)
    # the welded mesh is a closed surface: every edge is shared by exactly two faces
    edges = np.sort(welded_F[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert np.all(counts == 2)


def test_weld_respects_tolerance():
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1e-12, 0, 0], [1 + 1e-3, 0, 0], [0, 1, 0]],
                 dtype=float)
    F = np.array([[0, 1, 2], [3, 4, 5]])
    welded_V, welded_F, mapping = weld_vertices(V, F)
    np.testing.assert_array_equal(mapping, [0, 1, 2, 0, 3, 2])
    np.testing.assert_array_equal(welded_F, [[0, 1, 2], [0, 3, 2]])
    _, _, loose = weld_vertices(V, F, tolerance=1e-2)
    np.testing.assert_array_equal(loose, [0, 1, 2, 0, 1, 2])


def _ply(form: str, V, F, vertex_extra: str = "", face_lines=None) -> bytes:
    """A PLY file of V, F written by hand: `form` ascii or binary_{little,big}_endian, vertex x y z
    (float) plus an optional uchar property, faces as a uchar count and int indices."""
    header = (f"ply\nformat {form} 1.0\ncomment by hand\nelement vertex {len(V)}\nproperty float x\n"
              f"property float y\nproperty float z\n" + (f"property uchar {vertex_extra}\n" if vertex_extra else "")
              + f"element face {len(F)}\nproperty list uchar int vertex_indices\nend_header\n").encode()
    if form == "ascii":
        rows = [" ".join(map(str, [*v, *([7] if vertex_extra else [])])) for v in V]
        return header + "\n".join(rows + (face_lines or [f"3 {a} {b} {c}" for a, b, c in F])).encode() + b"\n"
    order = "<" if form == "binary_little_endian" else ">"
    fields = [("x", order + "f4"), ("y", order + "f4"), ("z", order + "f4")] + ([(vertex_extra, "u1")]
                                                                             if vertex_extra else [])
    table = np.zeros(len(V), fields)
    for axis, name in enumerate("xyz"):
        table[name] = V[:, axis]
    faces = np.zeros(len(F), [("n", "u1"), ("i", order + "i4", 3)])
    faces["n"], faces["i"] = 3, F
    return header + table.tobytes() + faces.tobytes()


@pytest.mark.parametrize("form", ["ascii", "binary_little_endian", "binary_big_endian"])
@pytest.mark.parametrize("extra", ["", "red"])
def test_triangle_ply_reads_without_trimesh_as_trimesh_reads_it(form, extra):
    from neurok_ros.geometry.mesh_io import _read_with_trimesh
    from neurok_ros.geometry.ply_reader import read_triangle_ply

    sphere = trimesh.creation.icosphere(subdivisions=1)
    V, F = np.asarray(sphere.vertices, np.float32).astype(np.float64), np.asarray(sphere.faces)
    data = _ply(form, V, F, extra)
    fast = read_triangle_ply(data)
    assert fast is not None
    import io

    V_trimesh, F_trimesh = _read_with_trimesh(io.BytesIO(data), "ply")
    np.testing.assert_array_equal(fast[0], V_trimesh)
    np.testing.assert_array_equal(fast[1], F_trimesh)
    np.testing.assert_array_equal(fast[1], F)
    assert fast[0].dtype == np.float64 and fast[1].dtype == np.int64


def test_other_ply_layouts_go_to_trimesh():
    from neurok_ros.geometry.ply_reader import read_triangle_ply

    V = TETRA_V.copy()
    quad = _ply("ascii", V, TETRA_F[:1], face_lines=["4 0 1 2 3"])
    assert read_triangle_ply(quad) is None
    V_quad, F_quad = load_mesh_bytes(quad, "ply")  # trimesh splits the quad into two triangles
    assert F_quad.shape == (2, 3)
    cloud = trimesh.PointCloud(np.random.default_rng(0).random((20, 3))).export(file_type="ply")
    assert read_triangle_ply(cloud) is None
    truncated = _ply("binary_little_endian", V, TETRA_F)[:-5]
    assert read_triangle_ply(truncated) is None
    with pytest.raises(MeshError, match="could not read mesh bytes as PLY"):
        load_mesh_bytes(truncated, "ply")
