"""Pivot placement: a hinge line moves to where the moving part meets the part it turns on."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import through

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.pivot_placement import place_pivots, slab_end
from neurok_ros.data.articulated import parts as P

pytestmark = pytest.mark.unit

CARCASS = P.box((0.6, 0.5, 0.8), (0.0, 0.0, 0.4), max_edge=0.1)  # closed body, front face at y = -0.25
HINGE = np.array([-0.3, -0.28, 0.0])  # the door's hinge, 2 cm in front of the carcass's left corner


def door(opened: float):
    """A 0.6 m x 0.02 m x 0.8 m door 2 cm clear of the carcass's front (farther than place_pivots' gap
    of 1 cm), turned `opened` rad out about HINGE."""
    closed = P.box((0.6, 0.02, 0.8), (0.0, -0.28, 0.4), max_edge=0.1)
    return P.transform(P.transform(closed, None, -HINGE), P.rotation((0, 0, 1), -opened), HINGE)


def placed_joint(child, origin):
    """The hinge after place_pivots, read with a vertical axis through `origin`."""
    vertices, faces = P.merge(CARCASS, child)
    labels = (np.arange(len(vertices)) >= len(CARCASS[0])).astype(np.int64)
    joint = Joint("door", "revolute", (0.0, 0.0, 1.0), origin, -1.5, 0.0, 0, 1, 0.6)
    return place_pivots(vertices, faces, Articulation(labels, [joint]), gap=0.01).joints[0]


def test_an_open_door_read_through_its_middle_hinges_at_its_touching_end():
    middle = HINGE + 0.3 * np.array([np.cos(-1.0), np.sin(-1.0), 0.0])
    joint = placed_joint(door(1.0), middle)
    assert through(joint, HINGE) < 0.011, joint.origin  # within half the door's thickness
    assert (joint.lower, joint.upper, joint.parent, joint.child) == (-1.5, 0.0, 0, 1)


def test_an_open_door_read_at_its_free_end_moves_to_its_hinge():
    free = HINGE + 0.6 * np.array([np.cos(-0.8), np.sin(-0.8), 0.0])
    assert through(placed_joint(door(0.8), free), HINGE) < 0.011


def test_a_closed_door_touches_at_both_ends_and_keeps_the_contact_rule():
    vertices, faces = door(0.0)
    joint = Joint("door", "revolute", (0.0, 0.0, 1.0), (0.0, -0.28, 0.4), -1.5, 0.0, 0, 1, 0.6)
    assert slab_end(joint, vertices, *CARCASS, diagonal=1.12) is None


def test_a_thick_block_is_no_slab():
    vertices, _ = P.transform(P.box((0.2, 0.15, 0.2), (0.0, 0.0, 0.1)), None, (0.2, -0.35, 0.3))
    joint = Joint("block", "revolute", (0.0, 0.0, 1.0), (0.2, -0.35, 0.4), -1.0, 1.0, 0, 1, 0.6)
    assert slab_end(joint, vertices, *CARCASS, diagonal=1.12) is None


def test_a_line_at_the_touching_end_already_stays():
    joint = Joint("door", "revolute", (0.0, 0.0, 1.0), HINGE + (0.004, 0.0, 0.2), -1.5, 0.0, 0, 1, 0.6)
    assert slab_end(joint, door(1.0)[0], *CARCASS, diagonal=1.12) is joint



def test_a_blade_turning_in_its_own_plane_is_no_slab():
    blade, _ = P.box((0.3, 0.05, 0.01), (0.44, 0.0, 0.805))  # flat on the carcass's top, over its edge
    joint = Joint("blade", "revolute", (0.0, 0.0, 1.0), (0.5, 0.0, 0.805), -1.0, 1.0, 0, 1, 0.6)
    assert slab_end(joint, blade, *CARCASS, diagonal=1.12) is None  # scissors turn about their screw


def test_a_flap_read_about_the_edge_across_its_hinge_turns_onto_the_strip_it_touches():
    # an open box 0.6 x 0.4 x 0.3 m and a 0.6 x 0.2 m flap standing up on its back wall's top edge
    box = P.box((0.6, 0.4, 0.3), (0.0, 0.0, 0.15), max_edge=0.1)
    flap = P.box((0.6, 0.01, 0.2), (0.0, 0.195, 0.4), max_edge=0.05)
    vertices, faces = P.merge(box, flap)
    labels = (np.arange(len(vertices)) >= len(box[0])).astype(np.int64)
    across = Joint("flap", "revolute", (0.0, 0.0, 1.0), (0.0, 0.195, 0.4), -1.5, 1.5, 0, 1, 0.6)
    joint = place_pivots(vertices, faces, Articulation(labels, [across]), gap=0.01).joints[0]
    assert abs(joint.axis[0]) > 0.999, joint.axis  # along the wall's top edge
    assert through(joint, np.array([0.0, 0.195, 0.3])) < 0.011, joint.origin
    assert (joint.lower, joint.upper, joint.parent, joint.child) == (-1.5, 1.5, 0, 1)
    along = Joint("flap", "revolute", (1.0, 0.0, 0.0), (0.0, 0.195, 0.3), -1.5, 1.5, 0, 1, 0.6)
    kept = place_pivots(vertices, faces, Articulation(labels, [along]), gap=0.01).joints[0]
    assert abs(kept.axis[0]) > 0.999 and through(kept, np.array([0.0, 0.195, 0.3])) < 0.011
