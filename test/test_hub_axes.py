"""Hubs: a turning part turns about the squat round piece that bears its contact with its parent."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle, through

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.hub_axes import hub_axes
from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.rigid_pieces import welded_pieces

pytestmark = pytest.mark.unit

PANEL = P.box((0.6, 0.04, 0.3), (0.0, 0.02, 0.0))  # front face y = 0, facing -y
WRONG = Joint("lever", "revolute", (1.0, 0.0, 0.0), (0.1, -0.05, 0.0), -0.5, 0.7, 0, 1, 0.6)


def read(parent, *child, joint=WRONG):
    """The joint after hub_axes, for a child part (meshes) hung from a parent mesh by `joint`."""
    vertices, faces = P.merge(parent, *child)
    labels = (np.arange(len(vertices)) >= len(parent[0])).astype(np.int64)
    return hub_axes(vertices, faces, welded_pieces(vertices, faces), labels, [joint])[0]


def test_a_lever_turns_about_its_hub():
    hub = P.cylinder(0.02, 0.03, 16, (0, -1, 0), (0.1, -0.015, 0.0))
    arm = P.tube(np.array([[0.1, -0.03, 0.0], [0.16, -0.03, 0.0], [0.22, -0.03, 0.0]]), 0.006, 10)
    joint = read(PANEL, hub, arm)
    assert angle(joint.axis, np.array([0.0, 1.0, 0.0])) < 1.0
    assert through(joint, (0.1, 0.0, 0.0)) < 1e-3
    assert (joint.name, joint.lower, joint.upper, joint.parent, joint.child) == ("lever", -0.5, 0.7, 0, 1)


def test_a_cap_on_a_column_turns_about_the_column():
    column = P.lathe([0.02, 0.02], [0.0, 0.2], 20)
    cap = P.lathe([0.022, 0.022, 0.012], [0.2, 0.215, 0.225], 20)
    joint = read(column, cap, joint=Joint("cap", "revolute", (0.0, 1.0, 0.0), (0.0, 0.0, 0.2), 0, 1, 0, 1, 0.5))
    assert angle(joint.axis, np.array([0.0, 0.0, 1.0])) < 1.0 and through(joint, (0, 0, 0.3)) < 1e-3


@pytest.mark.parametrize("name, child", [
    ("a long rod standing on the panel", [P.cylinder(0.01, 0.3, 16, (0, -1, 0), (0.1, -0.15, 0.0))]),
    ("a box on the panel", [P.box((0.05, 0.03, 0.05), (0.1, -0.015, 0.0))]),
    ("a disc whose arm also rests on the panel away from it",
     [P.cylinder(0.02, 0.01, 16, (0, -1, 0), (0.1, -0.005, 0.0)),
      P.box((0.2, 0.01, 0.02), (0.2, -0.005, 0.06))]),
    ("two round pieces on the contact, about different axes",
     [P.cylinder(0.02, 0.03, 16, (0, -1, 0), (0.1, -0.015, 0.0)),
      P.cylinder(0.015, 0.03, 16, (1, 0, 0), (0.1, -0.015, 0.0))]),
])
def test_what_has_no_hub_keeps_its_axis(name, child):
    joint = read(PANEL, *child)
    assert angle(joint.axis, WRONG.axis) < 1e-6 and np.allclose(joint.origin, WRONG.origin), name


def test_a_slide_keeps_its_axis():
    hub = P.cylinder(0.02, 0.03, 16, (0, -1, 0), (0.1, -0.015, 0.0))
    slide = Joint("slide", "prismatic", (1.0, 0.0, 0.0), (0.1, -0.05, 0.0), 0.0, 0.1, 0, 1, 0.6)
    assert angle(read(PANEL, hub, joint=slide).axis, slide.axis) < 1e-6


def test_a_dial_read_about_a_wrong_axis_turns_about_its_own():
    dial = P.knob(0.02, 0.025, (0.1, 0.0, 0.05), (0, -1, 0), 16)  # a knob with a pointer fin
    wrong = Joint("dial", "revolute", (1.0, 0.0, 0.0), (0.1, -0.01, 0.05), 0.0, 3.0, 0, 1, 0.8)
    joint = read(PANEL, dial, joint=wrong)
    assert angle(joint.axis, np.array([0.0, 1.0, 0.0])) < 1.0 and through(joint, (0.1, 0.0, 0.05)) < 1e-3
    assert (joint.name, joint.lower, joint.upper) == ("dial", 0.0, 3.0)
