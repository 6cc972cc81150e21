"""Lever handles: a rosette with an arm becomes a part of the surface it sits on, turning about it."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle, through

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.lever_handles import lever_handles, without_empty_parts
from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.rigid_pieces import welded_pieces

pytestmark = pytest.mark.unit

FRAME = P.box((0.05, 0.06, 1.0), (-0.33, 0.0, 0.0))
LEAF = P.box((0.6, 0.04, 1.0), (0.0, 0.0, 0.0))  # faces y = -0.02 and y = 0.02
HINGE = Joint("hinge", "revolute", (0.0, 0.0, 1.0), (-0.3, 0.0, 0.0), 0.0, 1.5, 0, 1, 0.9)


def lever(face_y: float, out: float, x: float = 0.2, z: float = 0.1) -> P.Mesh:
    """A rosette flat on the face y = face_y and an L-shaped arm leaving it along -x."""
    rosette = P.cylinder(0.025, 0.01, 16, (0, 1, 0), (x, face_y + out * 0.005, z))
    path = np.array([[x, face_y, z], [x, face_y + out * 0.04, z], [x - 0.06, face_y + out * 0.04, z],
                     [x - 0.12, face_y + out * 0.04, z]])
    return P.merge(rosette, P.tube(path, 0.008, 10))


def read(meshes: list, parts: list[int], joints: list[Joint]):
    """labels and joints after lever_handles, for meshes labelled part by part."""
    vertices, faces = P.merge(*meshes)
    labels = np.concatenate([np.full(len(m[0]), p) for m, p in zip(meshes, parts)]).astype(np.int64)
    return vertices, lever_handles(vertices, faces, welded_pieces(vertices, faces), labels, joints)


def test_the_levers_on_both_sides_of_a_leaf_are_one_part_of_the_leaf():
    handle = [lever(-0.02, -1), lever(0.02, 1)]
    vertices, (labels, joints) = read([FRAME, LEAF, *handle], [0, 1, 1, 1], [HINGE])
    assert labels.max() == 2 and [j.name for j in joints] == ["hinge", "joint_2"]
    handle_vertices = np.arange(len(vertices)) >= len(FRAME[0]) + len(LEAF[0])
    assert np.all(labels[handle_vertices] == 2) and not np.any(labels[~handle_vertices] == 2)
    joint = joints[1]
    assert (joint.type, joint.parent, joint.child) == ("revolute", 1, 2)
    assert angle(joint.axis, np.array([0.0, 1.0, 0.0])) < 1.0 and through(joint, (0.2, 0.0, 0.1)) < 1e-3
    assert joint.lower < 0.0 < joint.upper


def test_handle_halves_hung_from_the_frame_become_one_part_of_the_leaf():
    handle = [lever(-0.02, -1), lever(0.02, 1)]
    wrong = [Joint(f"joint_{p}", "revolute", (0.0, 0.0, 1.0), (0.2, 0.0, 0.0), 0.0, 1.0, 0, p, 0.4) for p in (2, 3)]
    _, (labels, joints) = read([FRAME, LEAF, *handle], [0, 1, 2, 3], [HINGE, *wrong])
    assert sorted(np.unique(labels)) == [0, 1, 2]
    assert [(j.parent, j.child) for j in joints] == [(0, 1), (1, 2)]
    assert angle(joints[1].axis, np.array([0.0, 1.0, 0.0])) < 1.0


@pytest.mark.parametrize("name, child", [
    ("a bar handle on two rosettes", [P.cylinder(0.02, 0.01, 16, (0, 1, 0), (0.2, -0.025, z)) for z in (0.0, 0.2)]
     + [P.bar_handle(0.2, 0.05, 0.008, (0.2, -0.02, 0.1), (0, 0, 1), (0, -1, 0))]),
    ("a knob with a pointer fin", [P.knob(0.03, 0.03, (0.2, -0.02, 0.1), (0, -1, 0), 16)]),
    ("a long rod with an arm", [P.cylinder(0.02, 0.2, 16, (0, 1, 0), (0.2, -0.12, 0.1)),
                                P.tube(np.array([[0.2, -0.2, 0.1], [0.05, -0.2, 0.1]]), 0.008, 10)]),
])
def test_what_is_no_lever_handle_is_left_alone(name, child):
    _, (labels, joints) = read([FRAME, LEAF, *child], [0, 1] + [1] * len(child), [HINGE])
    assert labels.max() == 1 and joints == [HINGE], name


def test_a_cap_with_a_lever_on_a_narrower_column_is_left_to_the_hub_stage():
    column = P.cylinder(0.02, 0.2, 20, (0, 0, 1), (0.0, 0.0, 0.1))
    cap = P.cylinder(0.022, 0.02, 20, (0, 0, 1), (0.0, 0.0, 0.21))
    arm = P.tube(np.array([[0.0, 0.0, 0.22], [0.1, 0.0, 0.24]]), 0.006, 10)
    _, (labels, joints) = read([P.box((0.3, 0.3, 0.02), (0, 0, -0.01)), column, cap, arm], [0, 0, 0, 0], [])
    assert labels.max() == 0 and joints == []


def test_dropping_an_emptied_part_renumbers_and_rehangs_its_children():
    tree = [(0, 1), (1, 2), (2, 3)]
    joints = [Joint(f"joint_{c}", "revolute", (0, 0, 1), (0, 0, 0), 0, 1, p, c, 0.5) for p, c in tree]
    labels, kept = without_empty_parts(np.array([0, 0, 1, 3, 3]), joints)
    assert labels.tolist() == [0, 0, 1, 2, 2]
    assert [(j.name, j.parent, j.child) for j in kept] == [("joint_1", 0, 1), ("joint_2", 1, 2)]


def test_a_lever_on_a_cap_on_a_body_that_touches_nothing_else_turns_about_the_cap():
    body = P.box((0.12, 0.06, 0.1), (0.0, 0.0, 0.0))  # top face z = 0.05
    cap = P.cylinder(0.02, 0.012, 20, (0, 0, 1), (0.03, 0.0, 0.056))
    arm = P.box((0.1, 0.015, 0.01), (-0.015, 0.0, 0.067))  # on the cap's top, leaving it along -x
    _, (labels, joints) = read([body, cap, arm], [0, 0, 0], [])
    assert labels.max() == 1 and len(joints) == 1
    n = len(body[0])
    assert np.all(labels[:n] == 0) and np.all(labels[n:] == 1)
    assert angle(joints[0].axis, np.array([0.0, 0.0, 1.0])) < 1.0 and through(joints[0], (0.03, 0.0, 0.06)) < 1e-3


def test_a_handle_takes_the_part_it_holds_most_of_and_its_surface_the_rest():
    handle = [lever(-0.02, -1), lever(0.02, 1)]
    meshes = [FRAME, LEAF, *handle]
    vertices, faces = P.merge(*meshes)
    labels = np.concatenate([np.full(len(m[0]), p) for m, p in zip(meshes, [0, 1, 2, 2])]).astype(np.int64)
    stray = np.flatnonzero(labels == 1)[:4]  # a readout's cut: four leaf vertices in the handle's part
    labels[stray] = 2
    wrong = Joint("joint_2", "prismatic", (0.0, 1.0, 0.0), (0.2, 0.0, 0.1), -0.01, 0.01, 1, 2, 0.4)
    labels, joints = lever_handles(vertices, faces, welded_pieces(vertices, faces), labels, [HINGE, wrong])
    assert np.all(labels[stray] == 1) and labels.max() == 2
    assert [(j.type, j.parent, j.child) for j in joints] == [("revolute", 0, 1), ("revolute", 1, 2)]


def test_a_handle_in_a_moving_part_that_holds_a_whole_piece_more_is_left_alone():
    handle = [lever(-0.02, -1), lever(0.02, 1)]
    block = P.box((0.05, 0.05, 0.05), (0.1, -0.045, -0.3))  # on the leaf's face, in the handle's part
    _, (labels, joints) = read([FRAME, LEAF, *handle, block], [0, 1, 2, 2, 2], [HINGE])
    assert labels.max() == 2 and joints == [HINGE]
