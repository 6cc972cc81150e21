"""Knobs from geometry: a small solid of revolution mounted on a broader surface along its axis."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle

from neurok_ros.articulation.knob_joints import knob_joints, revolution_axis
from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.rigid_pieces import welded_pieces

pytestmark = pytest.mark.unit

PANEL = P.box((0.6, 0.04, 0.3), (0.0, 0.02, 0.0))  # front face y = 0, facing -y


def read(*meshes, labels=None, joints=()):
    vertices, faces = P.merge(*meshes)
    pieces = welded_pieces(vertices, faces)
    labels = np.zeros(len(vertices), dtype=np.int64) if labels is None else labels
    return vertices, knob_joints(vertices, faces, pieces, labels, list(joints))


def test_a_knob_with_a_pointer_turns_about_its_own_axis():
    knob = P.knob(0.02, 0.025, (0.1, 0.0, 0.05), (0, -1, 0), 16)
    vertices, (labels, joints) = read(PANEL, knob)
    assert len(joints) == 1
    joint = joints[0]
    assert joint.type == "revolute" and angle(joint.axis, np.array([0.0, 1.0, 0.0])) < 1.0
    offset = np.array([0.1, 0.0, 0.05]) - joint.origin
    assert np.linalg.norm(offset - (offset @ joint.axis) * joint.axis) < 1e-3  # through the knob's centre
    on_knob = np.arange(len(vertices)) >= len(PANEL[0])
    assert np.all(labels[on_knob] == joint.child) and np.all(labels[~on_knob] == 0)  # fin included
    assert joint.lower == pytest.approx(-np.pi) and joint.upper == pytest.approx(np.pi)


@pytest.mark.parametrize("name, piece", [
    ("a cylinder lying on the panel", P.lathe([0.02, 0.02], [-0.06, 0.06], 16, (1, 0, 0), (0.1, -0.02, 0.0))),
    ("a square button", P.box((0.04, 0.02, 0.04), (0.1, -0.01, 0.05))),
    ("a ball", P.lathe(0.02 * np.sin(np.linspace(0.1, np.pi - 0.1, 12)),
                       0.02 * -np.cos(np.linspace(0.1, np.pi - 0.1, 12)), 24, (0, -1, 0), (0.1, -0.02, 0.05))),
])
def test_what_is_not_a_knob_gets_no_joint(name, piece):
    _, (labels, joints) = read(PANEL, piece)
    assert joints == [] and not labels.any(), name


def test_a_plate_under_a_narrower_column_is_not_a_knob():
    plate = P.lathe([0.04, 0.04], [0.0, 0.01], 24, (0, 0, 1))
    column = P.lathe([0.01, 0.01], [0.01, 0.2], 24, (0, 0, 1))
    _, (labels, joints) = read(plate, column, P.box((0.3, 0.3, 0.02), (0.0, 0.0, 0.3)))
    assert joints == []


def test_revolution_axis_of_a_lathe_is_its_axis():
    V, F = P.lathe([0.3, 0.5, 0.2], [0.0, 0.4, 1.0], 20, (0, 1, 0))
    axis, centre, radius = revolution_axis(V, F, 0.04)
    assert angle(axis, np.array([0.0, 1.0, 0.0])) < 1e-6 and radius == pytest.approx(0.5)
    assert revolution_axis(*P.box((1.0, 0.6, 0.3)), 0.04) is None


def test_wheels_touching_at_their_rims_turn_about_their_axles():
    body = P.box((0.4, 0.3, 0.2), (0.0, 0.0, 0.15))  # its underside at z = 0.05
    wheels = [P.cylinder(0.025, 0.04, 20, (1, 0, 0), (x, y, 0.025)) for x in (-0.15, 0.15) for y in (-0.1, 0.1)]
    vertices, (labels, joints) = read(body, *wheels)
    assert len(joints) == 4 and all(j.type == "revolute" and j.parent == 0 for j in joints)
    assert all(angle(j.axis, np.array([1.0, 0.0, 0.0])) < 1.0 for j in joints)
    centres = sorted(tuple(np.round(j.origin[1:], 3)) for j in joints)
    assert centres == sorted((y, 0.025) for _ in (0, 1) for y in (-0.1, 0.1))
    assert len(np.unique(labels[len(body[0]):])) == 4 and not labels[:len(body[0])].any()


def test_one_wheel_or_two_coaxial_discs_are_no_wheel_set():
    body = P.box((0.4, 0.3, 0.2), (0.0, 0.0, 0.15))
    wheel = P.cylinder(0.025, 0.04, 20, (1, 0, 0), (0.15, 0.1, 0.025))
    assert read(body, wheel)[1][1] == []
    discs = [P.cylinder(0.03, 0.01, 20, (0, 0, 1), (0.0, 0.0, z)) for z in (0.045, 0.255)]
    assert read(body, *discs)[1][1] == []
