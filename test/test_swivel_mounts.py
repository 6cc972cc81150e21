"""Swivel mounts: the round piece of the base a moving part sits on turns with it about its axis."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle, through

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.swivel_mounts import swivel_mounts
from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.rigid_pieces import welded_pieces

pytestmark = pytest.mark.unit

COLUMN = P.lathe([0.02, 0.02], [0.0, 0.2], 20)
CAP = P.lathe([0.018, 0.018, 0.012], [0.2, 0.212, 0.22], 16)
HUB = np.array([0.0, 0.0, 0.232])
LEVER = P.merge(P.cylinder(0.011, 0.016, 14, (1, 0, 0), HUB),
                P.tube(np.stack([HUB, HUB + (0.0, 0.04, 0.01), HUB + (0.0, 0.08, 0.02)]), 0.005, 10))
LIFT = Joint("lift", "revolute", (1.0, 0.0, 0.0), HUB, 0.0, 0.5, 0, 1, 0.7)


def read(base: list, lever, joint=LIFT):
    """Articulation after swivel_mounts, for base meshes (all part 0) and a lever (part 1) on `joint`."""
    vertices, faces = P.merge(*base, lever)
    labels = (np.arange(len(vertices)) >= len(vertices) - len(lever[0])).astype(np.int64)
    return vertices, Articulation(*swivel_mounts(vertices, faces, welded_pieces(vertices, faces), labels, [joint]))


def test_a_faucet_cap_swings_with_its_lever():
    vertices, readout = read([COLUMN, CAP], LEVER)
    assert len(readout.joints) == 2
    swing, lift = readout.joints  # parents first
    assert swing.parent == 0 and lift.parent == swing.child and lift.child == 1
    assert angle(swing.axis, np.array([0.0, 0.0, 1.0])) < 1.0 and through(swing, (0.0, 0.0, 0.5)) < 1e-3
    cap = (np.arange(len(vertices)) >= len(COLUMN[0])) & (np.arange(len(vertices)) < len(COLUMN[0]) + len(CAP[0]))
    assert np.all(readout.labels[cap] == swing.child) and np.all(readout.labels[~cap & (readout.labels != 1)] == 0)
    assert (lift.name, lift.lower, lift.upper) == ("lift", 0.0, 0.5)
    assert readout.subtree(swing.child).sum() == cap.sum() + len(LEVER[0])


@pytest.mark.parametrize("name, base, lever, joint", [
    ("a knob turning about the cap's own axis", [COLUMN, CAP], LEVER,
     Joint("turn", "revolute", (0.0, 0.0, 1.0), HUB, -1.0, 1.0, 0, 1, 0.7)),
    ("a tall column under the lever, no cap", [COLUMN], P.merge(
        P.cylinder(0.011, 0.016, 14, (1, 0, 0), (0.0, 0.0, 0.211)),
        P.tube(np.array([[0.0, 0.0, 0.211], [0.0, 0.08, 0.23]]), 0.005, 10)), None),
    ("a cap that carries nothing", [COLUMN, CAP], P.box((0.02, 0.02, 0.02), (0.3, 0.0, 0.1)), None),
    ("a cap that the lever touches on the column's side", [COLUMN, CAP],
     P.merge(P.cylinder(0.008, 0.02, 14, (1, 0, 0), (0.0, 0.0, 0.195)),
             P.tube(np.array([[0.0, 0.0, 0.195], [0.0, 0.08, 0.195]]), 0.004, 10)), None),
])
def test_what_is_no_swivel_mount_stays(name, base, lever, joint):
    joint = joint or Joint("lift", "revolute", (1.0, 0.0, 0.0), (0.0, 0.0, 0.2), 0.0, 0.5, 0, 1, 0.7)
    _, readout = read(base, lever, joint)
    assert len(readout.joints) == 1 and readout.joints[0].parent == 0, name
    assert set(np.unique(readout.labels)) == {0, 1}, name
