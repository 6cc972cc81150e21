"""Slide guides: a slide read into its guide's sides turns the way the guide lets it go."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.slide_guides import slide_guides
from neurok_ros.data.articulated import parts as P

pytestmark = pytest.mark.unit

# a window frame around an opening 0.8 m wide (x) and 0.6 m high (z), in the wall plane y = 0
FRAME = [P.box((0.05, 0.06, 0.7), (-0.425, 0.0, 0.3)), P.box((0.05, 0.06, 0.7), (0.425, 0.0, 0.3)),
         P.box((0.8, 0.06, 0.05), (0.0, 0.0, 0.625)), P.box((0.8, 0.06, 0.05), (0.0, 0.0, -0.025))]
SIDEWAYS = Joint("sash", "prismatic", (1.0, 0.0, 0.0), (0.0, 0.0, 0.15), -0.01, 0.01, 0, 1, 0.6)


def guided(child, joint=SIDEWAYS, frame=FRAME):
    """The joint after slide_guides, for a child mesh (part 1) in a frame (part 0)."""
    vertices, faces = P.merge(*frame, child)
    labels = (np.arange(len(vertices)) >= len(vertices) - len(child[0])).astype(np.int64)
    return slide_guides(vertices, faces, Articulation(labels, [joint])).joints[0]


def test_a_hung_sash_read_sideways_slides_up_its_track():
    joint = guided(P.box((0.796, 0.04, 0.3), (0.0, 0.0, 0.151)))
    assert angle(joint.axis, np.array([0.0, 0.0, 1.0])) < 1.0
    travel = joint.upper - joint.lower
    assert 0.25 < travel < 0.31, travel  # up to the head, 0.298 m above
    assert joint.lower <= 0.0 <= joint.upper and (joint.name, joint.parent, joint.child) == ("sash", 0, 1)


def test_a_sash_read_along_its_track_stays():
    along = Joint("sash", "prismatic", (0.0, 0.0, 1.0), (0.0, 0.0, 0.15), 0.0, 0.2, 0, 1, 0.6)
    joint = guided(P.box((0.796, 0.04, 0.3), (0.0, 0.0, 0.151)), along)
    assert angle(joint.axis, along.axis) < 1e-9 and (joint.lower, joint.upper) == (0.0, 0.2)


CARCASS = [P.box((0.6, 0.5, 0.02), (0.0, 0.0, 0.01)), P.box((0.6, 0.5, 0.02), (0.0, 0.0, 0.29)),
           P.box((0.02, 0.5, 0.26), (-0.29, 0.0, 0.15)), P.box((0.02, 0.5, 0.26), (0.29, 0.0, 0.15)),
           P.box((0.56, 0.02, 0.26), (0.0, 0.24, 0.15))]  # open at the front, y = -0.25
DRAWER = P.box((0.55, 0.45, 0.25), (0.0, -0.02, 0.15))


def test_a_drawer_pulled_out_freely_stays():
    pull = Joint("drawer", "prismatic", (0.0, -1.0, 0.0), (0.0, -0.25, 0.15), 0.0, 0.3, 0, 1, 0.6)
    assert angle(guided(DRAWER, pull, CARCASS).axis, pull.axis) < 1e-9


def test_a_drawer_read_askew_pulls_out_straight():
    askew = Joint("drawer", "prismatic", (np.sin(0.42), -np.cos(0.42), 0.0), (0.0, -0.25, 0.15), 0.0, 0.3, 0, 1, 0.6)
    joint = guided(DRAWER, askew, CARCASS)
    assert angle(joint.axis, np.array([0.0, 1.0, 0.0])) < 1.0 and joint.axis[1] < 0  # outwards, as read
    assert (joint.lower, joint.upper) == (0.0, 0.3)


def test_a_sash_that_fills_its_opening_stays():
    joint = guided(P.box((0.796, 0.04, 0.596), (0.0, 0.0, 0.3)))
    assert angle(joint.axis, SIDEWAYS.axis) < 1e-9 and (joint.lower, joint.upper) == (-0.01, 0.01)
