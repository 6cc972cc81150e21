"""URDF export and figure of an Articulation, on procedural objects with known parts and joints."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.urdf import face_labels, read_urdf_joints, write_urdf
from neurok_ros.data.articulated import ARTICULATED_CATEGORIES
from neurok_ros.geometry.mass_properties import mass_properties

pytestmark = pytest.mark.unit

mujoco = pytest.importorskip("mujoco")


def true_articulation(instance) -> Articulation:
    """The instance's ground truth as an Articulation: label j + 1 for the parts joint j carries directly
    (0 for the base), limits relative to the rest pose, part names from the generator."""
    names, rest = instance.generator["params"]["part_names"], instance.generator["params"]["rest_joint_values"]
    label_of_part = np.zeros(len(names), np.int64)
    for j, joint in enumerate(instance.joints):  # parents first, so deeper joints overwrite
        label_of_part[joint["child_parts"]] = j + 1
    joints = [Joint(joint["name"], joint["type"], joint["axis"], joint["pivot"], joint["range"][0] - rest[j],
                    joint["range"][1] - rest[j], int(label_of_part[joint["parent_part"]]), j + 1, 0.9)
              for j, joint in enumerate(instance.joints)]
    part_names = [names[0]] + [names[min(joint["child_parts"])] for joint in instance.joints]
    return Articulation(label_of_part[instance.part_ids], joints, "articulated", part_names)


def moved_by(articulation: Articulation, joint: Joint) -> np.ndarray:
    """(P,) bool: the parts that `joint` moves (its child and everything below it)."""
    parent = {j.child: j.parent for j in articulation.joints}
    moved = np.zeros(articulation.num_parts, bool)
    for part in range(articulation.num_parts):
        p = part
        while p != joint.child and p in parent:
            p = parent[p]
        moved[part] = p == joint.child
    return moved


def mujoco_vertices(model, data, body: str) -> np.ndarray:
    """World positions (k, 3) of the mesh vertices of a body's collision geoms."""
    out = []
    for g in np.flatnonzero(model.geom_bodyid == model.body(body).id):
        if model.geom_contype[g] == 0:
            continue
        mesh = model.geom_dataid[g]
        local = model.mesh_vert[model.mesh_vertadr[mesh]:model.mesh_vertadr[mesh] + model.mesh_vertnum[mesh]]
        out.append(data.geom_xpos[g] + local @ data.geom_xmat[g].reshape(3, 3).T)
    return np.concatenate(out) if out else np.zeros((0, 3))


def assert_same_points(actual: np.ndarray, expected: np.ndarray, tol: float = 2e-5) -> None:
    """Every expected point has an actual point within tol and vice versa (metres)."""
    assert np.max(cKDTree(actual).query(expected)[0]) < tol
    assert np.max(cKDTree(expected).query(actual)[0]) < tol


@pytest.fixture(scope="module", params=["laptop", "cabinet", "drawer", "lamp"])
def exported(request, tmp_path_factory):
    instance = ARTICULATED_CATEGORIES[request.param](0, 2)
    articulation = true_articulation(instance)
    vertices, faces = instance.rest_vertices.astype(np.float64), instance.faces
    path = write_urdf(tmp_path_factory.mktemp(request.param) / f"{request.param}.urdf", vertices, faces,
                      articulation, name=request.param)
    return path, vertices, faces, articulation, instance


def test_urdf_loads_in_yourdfpy_with_the_same_joints(exported):
    path, _, _, articulation, _ = exported
    read = {j["name"]: j for j in read_urdf_joints(path)}
    assert set(read) == {j.name for j in articulation.joints}
    for joint in articulation.joints:
        got = read[joint.name]
        assert got["type"] == joint.type
        np.testing.assert_allclose(got["axis"], joint.axis, atol=1e-6)
        assert got["lower"] == pytest.approx(joint.lower, abs=1e-9) and got["upper"] == pytest.approx(joint.upper)
        assert got["effort"] > 0 and got["velocity"] > 0
        assert got["parent"] == articulation.part_names[joint.parent]
        assert got["child"] == articulation.part_names[joint.child]
        parent_origin = np.zeros(3) if joint.parent == 0 else articulation.joint_of_child(joint.parent).origin
        np.testing.assert_allclose(got["origin"][:3, 3], joint.origin - parent_origin, atol=1e-9)
        np.testing.assert_allclose(got["origin"][:3, :3], np.eye(3), atol=1e-12)
    import yourdfpy

    robot = yourdfpy.URDF.load(str(path))  # meshes resolve from the relative filenames
    assert set(robot.link_map) == set(articulation.part_names)
    assert len(robot.scene.geometry) == articulation.num_parts


def test_link_meshes_are_relative_files_beside_the_urdf(exported):
    path = exported[0]
    filenames = [m.get("filename") for m in ET.parse(path).getroot().iter("mesh")]
    assert filenames and all(not f.startswith(("/", "file:", "package:")) for f in filenames)
    assert all((path.parent / f).is_file() for f in filenames)
    assert {f.split("/")[0] for f in filenames} == {f"{path.stem}_meshes"}


def test_mujoco_reproduces_the_mesh_at_zero_and_moves_exactly_the_child(exported):
    path, vertices, faces, articulation, _ = exported
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    assert model.njnt == len(articulation.joints) and model.nq == len(articulation.joints)
    owner = face_labels(faces, articulation.labels)
    pieces = [vertices[np.unique(faces[owner == p])] for p in range(articulation.num_parts)]
    mujoco.mj_kinematics(model, data)
    for part, name in enumerate(articulation.part_names):
        assert_same_points(mujoco_vertices(model, data, name), pieces[part])
    for joint in articulation.joints:
        q = 0.7 * (joint.upper if abs(joint.upper) > abs(joint.lower) else joint.lower)
        data.qpos[:] = 0.0
        data.qpos[model.joint(joint.name).qposadr[0]] = q
        mujoco.mj_kinematics(model, data)
        moved = moved_by(articulation, joint)
        for part, name in enumerate(articulation.part_names):
            expected = pieces[part]
            if moved[part] and joint.type == "revolute":
                rotation = Rotation.from_rotvec(q * joint.axis).as_matrix()
                expected = (expected - joint.origin) @ rotation.T + joint.origin
            elif moved[part]:
                expected = expected + q * joint.axis
            assert_same_points(mujoco_vertices(model, data, name), expected)


def test_masses_follow_density_and_volume(exported):
    path, vertices, faces, articulation, instance = exported
    model = mujoco.MjModel.from_xml_path(str(path))
    masses = np.array([model.body(name).mass[0] for name in articulation.part_names])
    assert np.all(masses > 0) and np.all(model.body_inertia[1:] > 0)
    if instance.category == "laptop":  # the lid link: the lid box and the screen box, both closed
        p = instance.generator["params"]
        volume = p["width"] * p["depth"] * p["lid_thickness"] + 0.9 * p["width"] * 0.84 * p["depth"] * p["gap"]
        assert masses[1] == pytest.approx(1000.0 * volume, rel=0.02)
    lid = face_labels(faces, articulation.labels) == 1
    mass, _, inertia, solid = mass_properties(vertices, faces[lid], density=250.0)
    assert solid and model.body(articulation.part_names[1]).mass[0] == pytest.approx(4 * mass, rel=1e-9)


def test_open_and_degenerate_pieces_still_compile(tmp_path):
    """A flat open plate (thin shell), a single triangle, a part with no faces (welded to the root)."""
    import trimesh

    box = trimesh.creation.box((1.0, 1.0, 0.2))
    box_v, box_f = box.vertices + [0.5, 0.5, 0.1], box.faces
    plate = np.array([[0, 0, 0.5], [1, 0, 0.5], [1, 1, 0.5], [0, 1, 0.5]])
    tri = np.array([[0, 0, 1.0], [0.1, 0, 1.0], [0, 0.1, 1.0]])
    vertices = np.concatenate([box_v, plate, tri, [[5.0, 5.0, 5.0]]])
    faces = np.concatenate([box_f, [[8, 9, 10], [8, 10, 11]], [[12, 13, 14]]])
    labels = np.array([0] * 8 + [1] * 4 + [2] * 3 + [3])
    articulation = Articulation(labels, [Joint("plate", "revolute", [0, 0, 1], [0.5, 0.5, 0.5], -1, 1, 0, 1, 0.5),
                                         Joint("tri", "prismatic", [1, 0, 0], [0, 0, 1], 0, 0.2, 1, 2, 0.5)])
    path = write_urdf(tmp_path / "odd.urdf", vertices, faces, articulation, density=500.0, surface_density=3.0)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    assert model.body("part_1").mass[0] == pytest.approx(3.0)  # 1 m^2 at 3 kg/m^2
    assert model.body("base").mass[0] == pytest.approx(500.0 * 0.2)
    assert model.body("part_3").mass[0] > 0
    assert {j["type"] for j in read_urdf_joints(path)} == {"revolute", "prismatic", "fixed"}
    got = mujoco_vertices(model, data, "part_1")
    assert np.max(cKDTree(got).query(plate)[0]) < 1e-6  # the plate itself, plus a backing 1e-5 m behind
    assert np.ptp(got[:, 2]) < 1e-4


def test_figure_is_a_png_with_every_part_colour(tmp_path):
    import matplotlib.image as mpimg

    from neurok_ros.visualisation.articulation_figure import (
        articulation_figure,
        cluster_decimate,
        part_colour,
        part_meshes,
    )

    instance = ARTICULATED_CATEGORIES["cabinet"](0, 2)
    articulation = true_articulation(instance)
    path = articulation_figure(tmp_path / "cabinet.png", instance.rest_vertices, instance.faces, articulation,
                               title="cabinet")
    image = mpimg.imread(path)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600
    colours = np.unique((image[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50
    for part in range(articulation.num_parts):  # each legend swatch is drawn in its exact colour
        rgb = np.array([int(part_colour(part)[i:i + 2], 16) for i in (1, 3, 5)])
        assert np.any(np.all(np.abs(colours.astype(int) - rgb) <= 2, axis=1))
    small = part_meshes(instance.rest_vertices, instance.faces, articulation.labels, articulation.num_parts, 600)
    assert len(small) == articulation.num_parts and all(len(f) > 0 for _, f in small)
    assert sum(len(f) for _, f in small) <= 700
    V, F = cluster_decimate(instance.rest_vertices.astype(float), instance.faces, 300)
    assert 0 < len(F) <= 300 and F.max() < len(V)


def test_joints_that_do_not_form_a_tree_are_refused(tmp_path):
    vertices, faces = np.eye(3), np.array([[0, 1, 2]])
    for parent, child in ((1, 0), (0, 3), (1, 1)):
        articulation = Articulation([0, 1, 2], [Joint("j", "revolute", [0, 0, 1], [0, 0, 0], 0, 1, parent, child, 1)])
        with pytest.raises(ValueError):
            write_urdf(tmp_path / "bad.urdf", vertices, faces, articulation)
    cycle = [Joint(name, "revolute", [0, 0, 1], [0, 0, 0], 0, 1, parent, child, 1)
             for name, parent, child in (("a", 2, 1), ("b", 1, 2))]
    with pytest.raises(ValueError, match="cycle"):
        write_urdf(tmp_path / "bad.urdf", vertices, faces, Articulation([0, 1, 2], cycle))
