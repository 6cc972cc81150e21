"""Panel directions: the normals of a manufactured object's flat panels, not where its vertices crowd."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle

from neurok_ros.articulation.head_readout import principal_directions
from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.planar_directions import planar_directions

pytestmark = pytest.mark.unit

TURN = P.rotation((0.3, -0.5, 0.8), 0.7)  # an arbitrary frame: the mesh's axes mean nothing


def test_a_cabinet_with_a_dense_knob_keeps_its_panel_directions():
    carcass = P.box((0.6, 0.4, 0.8), (0.0, 0.0, 0.4), max_edge=0.2)
    knob = P.lathe([0.012, 0.02, 0.02, 0.012], [0.0, 0.01, 0.03, 0.04], sections=48,
                   axis=(0.0, -1.0, 0.0), base=(0.25, -0.2, 0.75))  # dense, off centre: tilts the PCA
    vertices, faces = P.transform(P.merge(carcass, knob), TURN)
    found = planar_directions(vertices, faces)
    assert len(found) == 3
    for side in TURN.T:  # the carcass's own axes in the mesh frame
        assert min(angle(side, direction) for direction in found) < 0.01
    tilted = max(min(angle(side, d) for d in principal_directions(vertices)) for side in TURN.T)
    assert tilted > 1.0, tilted  # what the vertex principal directions would have given


def test_a_cylinder_gives_its_axis_and_a_ball_nothing():
    vertices, faces = P.transform(P.cylinder(0.1, 0.05, sections=32), TURN)
    found = planar_directions(vertices, faces)
    assert len(found) == 1 and angle(found[0], TURN[:, 2]) < 0.01  # the caps; the side spreads
    ball = P.lathe(np.sin(np.linspace(0.05, np.pi - 0.05, 24)), -np.cos(np.linspace(0.05, np.pi - 0.05, 24)),
                   sections=32)
    assert planar_directions(*ball, min_share=0.1).shape == (0, 3)


def test_the_facets_of_a_low_poly_cylinder_are_no_panels():
    vertices, faces = P.transform(P.cylinder(0.05, 0.4, sections=10), TURN)  # a lamp's rod
    found = planar_directions(vertices, faces, min_share=0.02)
    assert len(found) == 1 and angle(found[0], TURN[:, 2]) < 0.01  # its caps only
