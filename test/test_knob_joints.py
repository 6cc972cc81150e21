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
