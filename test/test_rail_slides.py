"""Rail slides: a carriage a rail runs through slides along it; a pole on it swings in its travel plane."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle, through
from labelled_meshes import labelled

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.rail_slides import rail_slides
from neurok_ros.data.articulated import parts as P

pytestmark = pytest.mark.unit

RAIL = P.box((4.0, 0.05, 0.05), (0.0, 0.0, 0.0))
CART = P.box((0.5, 0.5, 0.2), (0.5, 0.0, 0.0))
POLE = P.box((0.05, 0.05, 1.0), (0.5, 0.0, 0.5))  # its lower end at the cart's centre


def read(meshes: list, parts: list[int], joints: list[Joint]):
    """(labels, joints) after rail_slides, for meshes labelled part by part, and each mesh's vertex mask."""
    vertices, faces, pieces, labels, owner = labelled(meshes, parts)
    return rail_slides(vertices, faces, pieces, labels, joints), owner


def test_a_cart_slides_along_its_rail_and_its_pole_swings_in_the_plane_of_travel():
    wrong = Joint("joint_1", "revolute", (0.0, 0.0, 1.0), (0.5, 0.0, 0.1), -0.1, 0.1, 0, 1, 0.6)
    (labels, joints), owner = read([RAIL, CART, POLE], [1, 0, 1], [wrong])  # a head's reading: the cart still
    assert [labels[owner == k].tolist() == [k] * (owner == k).sum() for k in range(3)] == [True] * 3
    slide, swing = joints
    assert (slide.type, slide.parent, slide.child) == ("prismatic", 0, 1)
    assert angle(slide.axis, np.array([1.0, 0.0, 0.0])) < 0.5
    travel = sorted(np.array([slide.lower, slide.upper]) * np.sign(slide.axis[0]))
    assert np.allclose(travel, [-2.25, 1.25], atol=1e-6)  # the cart's faces meet the rail's ends
    assert (swing.type, swing.parent, swing.child) == ("revolute", 1, 2)
    assert angle(swing.axis, np.array([0.0, 1.0, 0.0])) < 0.5 and through(swing, (0.5, 0.0, 0.0)) < 1e-6


@pytest.mark.parametrize("name, meshes", [
    ("a bar handle on two posts", [P.box((0.6, 0.04, 1.0)),
                                   P.bar_handle(0.5, 0.05, 0.01, (0.0, -0.02, 0.0), (1, 0, 0), (0, -1, 0))]),
    ("a pin that ends in its hinge", [P.box((0.2, 0.2, 0.2), (0.0, 0.0, 0.0)),
                                      P.cylinder(0.01, 0.6, 12, (1, 0, 0), (0.2, 0.0, 0.0))]),
    ("a rod beside a block", [P.box((4.0, 0.05, 0.05)), P.box((0.5, 0.5, 0.2), (0.5, 0.5, 0.0))]),
])
def test_what_rides_on_no_rail_is_left_alone(name, meshes):
    (labels, joints), _ = read(meshes, [0] * len(meshes), [])
    assert labels.max() == 0 and joints == [], name
