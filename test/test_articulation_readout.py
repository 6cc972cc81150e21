"""`neurok articulate` and the readout on procedural objects with known parts and joints."""
from __future__ import annotations

import json

import numpy as np
import pytest

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.articulation.evaluation import score_readout, true_joints
from neurok_ros.articulation.readout import articulate
from neurok_ros.cli import main
from neurok_ros.data.articulated import ARTICULATED_CATEGORIES
from neurok_ros.geometry.mesh_io import save_mesh
from neurok_ros.geometry.rigid_pieces import vertex_pieces, welded_pieces

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def model():
    from neurok_ros.kinematics.instance import load_default_model

    return load_default_model()[0]


def laptop(seed: int = 7, frame: int = 5):
    instance = ARTICULATED_CATEGORIES["laptop"](seed, 16)
    return instance, instance.frames[frame].astype(np.float64), frame


def one_surface(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """faces plus one thin triangle from each piece's vertex nearest the first piece to its two
    nearest vertices there: the assembly becomes one connected surface, as a scan would be."""
    from scipy.spatial import cKDTree

    pieces = vertex_pieces(faces, len(vertices))
    main_piece = np.flatnonzero(pieces == 0)
    tree = cKDTree(vertices[main_piece])
    bridges = []
    for piece in range(1, pieces.max() + 1):
        members = np.flatnonzero(pieces == piece)
        distances, nearest = tree.query(vertices[members], k=2)
        i = int(np.argmin(distances[:, 0]))
        bridges.append([members[i], main_piece[nearest[i, 0]], main_piece[nearest[i, 1]]])
    return np.concatenate([faces, np.asarray(bridges, dtype=faces.dtype)])


def test_articulate_cli_writes_json_labels_urdf_and_figure(tmp_path, capsys):
    instance, vertices, frame = laptop()
    mesh = tmp_path / "laptop.ply"
    save_mesh(mesh, vertices, instance.faces)
    out = [tmp_path / "labels.npy", tmp_path / "laptop.urdf", tmp_path / "sheet.png", tmp_path / "readout.json"]
    status = main(["articulate", str(mesh), "--json", "--labels", str(out[0]), "--urdf", str(out[1]),
                   "--png", str(out[2]), "--out", str(out[3])])
    assert status == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(result) == {"parts", "joints", "kind", "seconds"} and result["kind"] == "articulated"
    labels = np.load(out[0])
    assert labels.shape == (instance.num_vertices,) and labels.min() == 0
    assert [p["label"] for p in result["parts"]] == list(range(labels.max() + 1))
    assert sum(p["vertices"] for p in result["parts"]) == instance.num_vertices
    for joint in result["joints"]:
        assert set(joint) == {"name", "type", "axis", "origin", "lower", "upper", "parent", "child", "confidence"}
        assert abs(np.linalg.norm(joint["axis"]) - 1) < 1e-9 and 0 <= joint["confidence"] <= 1
        assert joint["lower"] <= 0 <= joint["upper"]
    hinge = true_joints(instance, frame)[0]
    best = max(result["joints"], key=lambda j: abs(np.dot(j["axis"], hinge.axis)))
    assert best["type"] == "revolute"
    assert np.degrees(np.arccos(min(1.0, abs(np.dot(best["axis"], hinge.axis))))) < 10

    import mujoco
    import yourdfpy

    compiled = mujoco.MjModel.from_xml_path(str(out[1]))
    urdf = yourdfpy.URDF.load(str(out[1]))
    names = sorted(j["name"] for j in result["joints"])
    assert sorted(name for name, j in urdf.joint_map.items() if j.type != "fixed") == names
    assert sorted(compiled.joint(i).name for i in range(compiled.njnt)) == names
    assert out[2].stat().st_size > 10_000
    saved = Articulation.load(out[3], instance.num_vertices)  # what `neurok simulate --articulation` reads
    np.testing.assert_array_equal(saved.labels, labels)
    assert [j.to_dict() for j in saved.joints] == result["joints"]


@pytest.mark.parametrize("category", ["laptop", "microwave", "box_lid"])
def test_readout_recovers_procedural_joints(model, category):
    instance = ARTICULATED_CATEGORIES[category](11, 16)
    vertices = instance.frames[5].astype(np.float64)
    rows = score_readout(articulate(model, vertices, instance.faces), true_joints(instance, 5), vertices)
    hinge = rows[0]  # the main joint: the lid, the door, the first flap
    assert hinge["type"] and hinge["axis_deg"] < 10 and hinge["child_iou"] > 0.8, rows


def test_single_surface_laptop_keeps_its_hinge(model):
    instance, vertices, frame = laptop(seed=3)
    faces = one_surface(vertices, instance.faces)
    assert welded_pieces(vertices, faces).max() == 0
    readout = articulate(model, vertices, faces)
    assert readout.num_parts >= 2 and readout.kind == "articulated"
    hinge = true_joints(instance, frame)[0]
    row = score_readout(readout, [hinge], vertices)[0]
    assert row["type"] and row["axis_deg"] < 15, row


def test_a_flat_cloth_is_cloth_with_no_joints(model):
    """One open thin sheet folds anywhere: the readout gives it no rigid parts, and `neurok simulate`
    then carries it as a free body (it falls, docs/physics.md section 6)."""
    xs = np.linspace(-0.25, 0.25, 16)
    X, Y = np.meshgrid(xs, xs)
    vertices = np.stack([X.ravel(), Y.ravel(), np.full(X.size, 0.5)], 1)
    a = (np.arange(15)[:, None] * 16 + np.arange(15)[None]).ravel()
    faces = np.concatenate([np.stack([a, a + 1, a + 16], 1), np.stack([a + 1, a + 17, a + 16], 1)])
    readout = articulate(model, vertices, faces)
    assert readout.kind == "cloth" and not readout.joints and readout.num_parts == 1


def test_welding_joins_seams_but_not_touching_closed_parts():
    instance, vertices, _ = laptop()
    pieces = vertex_pieces(instance.faces, instance.num_vertices)
    # a UV-seam export: every face gets its own copies of its corners
    soup_vertices = vertices[instance.faces].reshape(-1, 3)
    soup_faces = np.arange(len(soup_vertices)).reshape(-1, 3)
    soup_pieces = welded_pieces(soup_vertices, soup_faces)
    assert soup_pieces.max() == pieces.max()
    # the closed lid resting on the closed base is not welded to it
    assert len(np.unique(welded_pieces(vertices, instance.faces))) == pieces.max() + 1


@pytest.mark.parametrize("content, reason", [
    ("ply\nformat ascii 1.0\nelement vertex 0\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n",
     ""),
    ("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
     "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\nnan 1 0\n3 0 1 2\n", "finite"),
    ("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
     "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n", "too few"),
    ("this is not a mesh", ""),
])
def test_bad_meshes_give_one_line_and_exit_2(tmp_path, capsys, content, reason):
    path = tmp_path / "bad.ply"
    path.write_text(content)
    assert main(["articulate", str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("neurok articulate: error:") and reason in err


def test_a_door_hung_from_the_door_above_it_on_one_hinge_line_hangs_from_the_body():
    from neurok_ros.articulation.articulation import Joint
    from neurok_ros.articulation.readout import off_one_line

    up = np.array([0.0, 0.0, 1.0])
    upper = Joint("joint_1", "revolute", up, np.array([-0.4, -0.3, 1.2]), -3.1, 0.0, 0, 1, 0.9)
    lower = Joint("joint_2", "revolute", up, np.array([-0.41, -0.3, 0.5]), -3.1, 0.0, 1, 2, 0.8)
    shade = Joint("joint_3", "revolute", up, np.array([-0.1, -0.3, 0.5]), -1.0, 1.0, 2, 3, 0.8)  # a parallel line
    slide = Joint("joint_4", "prismatic", up, np.array([-0.41, -0.3, 0.5]), 0.0, 0.2, 2, 4, 0.8)
    areas = np.array([4.0, 1.0, 1.2, 0.3, 0.1])  # body, two doors, a shade, a slide
    joints = off_one_line([upper, lower, shade, slide], areas, 10.0, 0.05)
    assert [j.parent for j in joints] == [0, 0, 2, 2]
    assert [(j.name, j.child) for j in joints] == [("joint_1", 1), ("joint_2", 2), ("joint_3", 3), ("joint_4", 4)]
    knuckle = np.array([4.0, 0.2, 1.2, 0.3, 0.1])  # a small knuckle (part 1) carrying an arm on its line
    assert [j.parent for j in off_one_line([upper, lower], knuckle, 10.0, 0.05)] == [0, 1]


def test_a_part_the_motions_hang_from_the_base_joins_the_heads_readout_on_its_base():
    from neurok_ros.articulation.articulation import Joint
    from neurok_ros.articulation.readout import joined

    up = np.array([0.0, 0.0, 1.0])
    # the head: a big moving part 1 (vertices 0-5) on a small base (6-8); the lever (9-10) left on the base
    head_labels = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    head_joints = [Joint("joint_1", "revolute", up, np.zeros(3), -1.0, 1.0, 0, 1, 0.8)]
    # the motions: the lever moves relative to a base that holds everything else
    motion_labels = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    lever = Joint("joint_1", "revolute", up, np.array([1.0, 0.0, 0.0]), -0.5, 0.5, 0, 1, 0.6)
    labels, joints = joined(head_labels, head_joints, motion_labels, [lever], 0.2)
    assert labels.tolist() == [1, 1, 1, 1, 1, 1, 0, 0, 0, 2, 2]
    assert [(j.parent, j.child) for j in joints] == [(0, 1), (0, 2)]  # from the base, not from part 1


def test_eval_articulation_pose_fit_scores_each_pair_through_the_true_joints(tmp_path, capsys):
    """`neurok eval-articulation --pose-fit --truth` on a one-laptop dataset: two pairs, each fitted
    through the laptop's own hinge, its value back and the fit above doing nothing."""
    from neurok_ros.data.instance_format import save_instance

    save_instance(tmp_path / "laptop_0003.npz", ARTICULATED_CATEGORIES["laptop"](3, 16))
    (tmp_path / "manifest.json").write_text(json.dumps({"splits": {"val": ["laptop_0003.npz"]},
                                                        "categories": {"laptop": {"kind": "articulated"}}}))
    rows = tmp_path / "rows.json"
    assert main(["eval-articulation", "--data", str(tmp_path), "--split", "val", "--pose-fit", "--truth",
                 "--json", str(rows), "--device", "cpu"]) == 0
    table = capsys.readouterr().out
    assert "| **all** | " in table and "joint values right" in table
    pairs = json.loads(rows.read_text())
    assert 1 <= len(pairs) <= 2
    for pair in pairs:
        assert pair["joints_right"] and pair["joints_alike"] and pair["kept"] in ("joints", "learned"), pair
        assert pair["iou"] > pair["identity_iou"] + 0.05
    assert main(["eval-articulation", "--data", str(tmp_path), "--split", "val", "--pose-fit", "--no-joints",
                 "--partial-view", "--json", str(rows), "--device", "cpu"]) == 0  # one view, the learned fit alone
    capsys.readouterr()
    assert all(pair["kept"] == "learned" and pair["values"] == [] for pair in json.loads(rows.read_text()))
