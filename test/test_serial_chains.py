"""Serial chains: large pieces joined end to end by round contacts are links with a joint at each."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle, through

from neurok_ros.articulation.serial_chains import serial_chain
from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.rigid_pieces import welded_pieces

pytestmark = pytest.mark.unit

RADII = (0.10, 0.09, 0.08, 0.07, 0.06, 0.05)  # a column of links, the base widest
TOPS = np.cumsum([0.2] * len(RADII))


def column(order=tuple(range(6))) -> list:
    """The links stacked along z, each standing on the one below, in the given mesh order."""
    return [P.cylinder(RADII[i], 0.2, 24, (0, 0, 1), (0.0, 0.0, TOPS[i] - 0.1)) for i in order]


def read(meshes: list):
    vertices, faces = P.merge(*meshes)
    return vertices, serial_chain(vertices, faces, welded_pieces(vertices, faces))


def test_links_stacked_end_to_end_turn_about_their_contacts_from_the_widest_end():
    for order in (range(6), range(5, -1, -1)):
        meshes = column(order)
        vertices, (labels, joints) = read(meshes)
        assert len(joints) == 5 and all(j.type == "revolute" for j in joints)
        assert [(j.parent, j.child) for j in joints] == [(i, i + 1) for i in range(5)]
        for i, joint in enumerate(joints):
            assert angle(joint.axis, np.array([0.0, 0.0, 1.0])) < 1.0
            assert through(joint, (0.0, 0.0, TOPS[i])) < 1e-6  # the contact between link i and i + 1
        sizes = np.cumsum([0] + [len(m[0]) for m in meshes])
        base = list(order).index(0)
        assert np.all(labels[sizes[base]:sizes[base + 1]] == 0)


def test_a_tool_plate_on_the_last_link_is_a_last_link():
    tool = P.cylinder(0.03, 0.02, 24, (0, 0, 1), (0.0, 0.0, TOPS[-1] + 0.01))
    _, (labels, joints) = read([*column(), tool])
    assert len(joints) == 6 and joints[-1].child == 6
    assert through(joints[-1], (0.0, 0.0, TOPS[-1])) < 1e-6


def test_links_meeting_through_small_knuckles_or_at_square_contacts_are_no_chain():
    spaced = [P.cylinder(r, 0.2, 24, (0, 0, 1), (0.0, 0.0, 0.22 * i + 0.1)) for i, r in enumerate(RADII)]
    knuckled = [P.cylinder(0.03, 0.02, 24, (0, 0, 1), (0.0, 0.0, 0.22 * i + 0.21)) for i in range(5)]
    assert read([*spaced, *knuckled])[1] is None  # a lamp's arms meet only through knuckles
    boxes = [P.box((0.2, 0.2, 0.2), (0.0, 0.0, 0.2 * i + 0.1)) for i in range(6)]
    assert read(boxes)[1] is None  # a stack of boxes touches at square faces
    assert read(column()[:4])[1] is None  # too few links
