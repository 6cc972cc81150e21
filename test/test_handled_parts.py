"""Handled parts: the box a pull handle is mounted on slides out, the slab it is on swings."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle, through

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.handled_parts import handled_parts
from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.rigid_pieces import welded_pieces

pytestmark = pytest.mark.unit

CARCASS = [P.box((0.02, 0.4, 0.5), (x, 0.0, 0.25)) for x in (-0.31, 0.31)] + [
    P.box((0.6, 0.4, 0.02), (0.0, 0.0, z)) for z in (0.01, 0.23, 0.49)] + [P.box((0.6, 0.02, 0.5), (0.0, 0.21, 0.25))]
DRAWER = P.box((0.6, 0.4, 0.2), (0.0, 0.0, 0.12))  # on the bottom, under the shelf, no clearance
UPPER = P.box((0.6, 0.4, 0.24), (0.0, 0.0, 0.36))  # a box in the upper bay, with no handle
PULL = P.bar_handle(0.2, 0.04, 0.008, (0.0, -0.2, 0.12), (1, 0, 0), (0, -1, 0))
DOOR = P.box((0.6, 0.02, 0.5), (0.0, -0.21, 0.25))
DOOR_PULL = P.bar_handle(0.2, 0.04, 0.008, (0.25, -0.22, 0.25), (0, 0, 1), (0, -1, 0))


def read(meshes: list, parts: list[int], joints: list[Joint]):
    """Vertex masks of each mesh, then labels and joints after handled_parts."""
    vertices, faces = P.merge(*meshes)
    sizes = np.cumsum([0] + [len(m[0]) for m in meshes])
    masks = [(np.arange(len(vertices)) >= a) & (np.arange(len(vertices)) < b) for a, b in zip(sizes[:-1], sizes[1:])]
    labels = np.concatenate([np.full(len(m[0]), p) for m, p in zip(meshes, parts)]).astype(np.int64)
    return masks, handled_parts(vertices, faces, welded_pieces(vertices, faces), labels, joints)


def test_a_box_with_a_pull_on_its_front_slides_out_along_the_front_normal():
    meshes = [*CARCASS, DRAWER, UPPER, PULL]
    masks, (labels, joints) = read(meshes, [0] * len(meshes), [])
    assert len(joints) == 1
    joint = joints[0]
    assert (joint.type, joint.parent, joint.child) == ("prismatic", 0, 1)
    assert angle(joint.axis, np.array([0.0, 1.0, 0.0])) < 0.5
    assert joint.axis[1] < 0  # out of the front, towards the pull
    assert joint.lower == 0.0 and joint.upper == pytest.approx(0.4, abs=1e-6)
    moving = masks[-3] | masks[-1]
    assert np.all(labels[moving] == 1) and np.all(labels[~moving] == 0)


def test_a_slab_with_a_pull_near_one_edge_hinges_on_the_other():
    meshes = [*CARCASS, DOOR, DOOR_PULL]
    masks, (labels, joints) = read(meshes, [0] * len(meshes), [])
    assert len(joints) == 1
    joint = joints[0]
    assert joint.type == "revolute" and angle(joint.axis, np.array([0.0, 0.0, 1.0])) < 0.5
    assert through(joint, (-0.3, -0.21, 0.25)) < 1e-3  # the edge far from the pull
    tangent = np.cross(joint.axis, np.array([0.25, -0.26, 0.25]) - joint.origin)
    assert tangent[1] < 0  # opening turns the pull out, away from the carcass
    assert 0.0 == joint.lower < joint.upper
    assert np.all(labels[masks[-2] | masks[-1]] == 1)


def test_a_knob_is_no_pull_and_a_drawer_read_already_stays_as_read():
    knob = P.knob(0.03, 0.03, (0.0, -0.2, 0.12), (0, -1, 0), 16, pointer=False)
    masks, (labels, joints) = read([*CARCASS, DRAWER, UPPER, knob], [0] * (len(CARCASS) + 3), [])
    assert joints == [] and np.all(labels == 0)
    read_already = Joint("slide", "prismatic", (0.0, 1.0, 0.0), (0.0, 0.0, 0.12), -0.3, 0.0, 0, 1, 0.9)
    meshes = [*CARCASS, DRAWER, UPPER, PULL]
    parts = [0] * len(CARCASS) + [1, 0, 1]
    masks, (labels, joints) = read(meshes, parts, [read_already])
    assert joints == [read_already]
    assert np.array_equal(labels, np.concatenate([np.full(len(m[0]), p) for m, p in zip(meshes, parts)]))


def test_a_drawer_the_readout_cut_in_two_is_made_whole_and_reaches_its_depth():
    meshes = [*CARCASS, DRAWER, UPPER, PULL]
    vertices, faces = P.merge(*meshes)
    labels = np.concatenate([np.full(len(m[0]), 0) for m in meshes]).astype(np.int64)
    start = sum(len(m[0]) for m in CARCASS)
    drawer = np.arange(start, start + len(DRAWER[0]))
    labels[drawer[: 2 * len(drawer) // 3]] = 1  # the learned motions took two thirds of the box
    learned = Joint("slide", "prismatic", (0.0, 1.0, 0.0), (0.0, 0.0, 0.12), -0.02, 0.01, 0, 1, 0.9)
    labels, joints = handled_parts(vertices, faces, welded_pieces(vertices, faces), labels, [learned])
    assert [j.name for j in joints] == ["slide"]
    assert joints[0].lower == pytest.approx(-0.4, abs=1e-6) and joints[0].upper == 0.01  # out along -y
    moving = np.zeros(len(vertices), dtype=bool)
    moving[drawer] = True
    moving[len(vertices) - len(PULL[0]):] = True
    assert np.array_equal(labels == 1, moving)
