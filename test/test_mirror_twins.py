"""Mirror twins: a moving part's mirror image on a symmetric object moves the mirrored way."""
from __future__ import annotations

import numpy as np
import pytest
from joint_geometry import angle, through
from labelled_meshes import labelled

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.mirror_twins import mirror_twins
from neurok_ros.data.articulated import parts as P

pytestmark = pytest.mark.unit

PALM = P.box((0.2, 0.02, 0.02), (0.1, 0.0, 0.0))


def finger(side: float) -> list:
    """A two-piece finger on the palm's end, on the side y > 0 (side 1) or y < 0 (side -1)."""
    return [P.box((0.1, 0.04, 0.05), (0.25, side * 0.03, 0.0)), P.box((0.06, 0.02, 0.02), (0.33, side * 0.02, 0.0))]


def read(meshes: list, parts: list[int], joints: list[Joint]):
    """(labels, joints) after mirror_twins, for meshes labelled part by part, and each mesh's index per vertex."""
    vertices, faces, pieces, labels, owner = labelled(meshes, parts)
    return mirror_twins(vertices, faces, pieces, labels, joints), owner


def test_a_finger_read_with_its_twins_tip_gets_its_twin_back():
    left, right = finger(1.0), finger(-1.0)
    joint = Joint("joint_1", "revolute", (0.0, 0.0, 1.0), (0.2, 0.01, 0.0), 0.0, 0.5, 0, 1, 0.9)
    (labels, joints), owner = read([PALM, *left, *right], [0, 1, 1, 0, 1], [joint])  # the right tip on the left
    assert [np.unique(labels[owner == k]).tolist() for k in range(5)] == [[0], [1], [1], [2], [2]]
    twin = joints[1]
    assert (twin.type, twin.parent, twin.child, twin.lower, twin.upper) == ("revolute", 0, 2, 0.0, 0.5)
    assert np.allclose(twin.axis, (0.0, 0.0, -1.0)) and through(twin, (0.2, -0.01, 0.0)) < 1e-9


def test_a_cabinets_missed_door_mirrors_the_read_one():
    body = P.open_box((0.8, 0.4, 0.6), (0.0, 0.0, 0.0), 0.02, "-y")
    doors = [P.box((0.39, 0.02, 0.58), (s * 0.2, -0.21, 0.0)) for s in (1.0, -1.0)]
    hinge = Joint("joint_1", "revolute", (0.0, 0.0, 1.0), (0.395, -0.21, 0.0), 0.0, 1.5, 0, 1, 0.8)
    (labels, joints), owner = read([body, *doors], [0, 1, 0], [hinge])
    assert [np.unique(labels[owner == k]).tolist() for k in range(3)] == [[0], [1], [2]]
    assert angle(joints[1].axis, np.array([0.0, 0.0, 1.0])) < 1e-6 and through(joints[1], (-0.395, -0.21, 0.0)) < 1e-9


@pytest.mark.parametrize("name, meshes, parts", [
    ("a lid across the plane", [P.box((0.4, 0.4, 0.1)), P.box((0.4, 0.4, 0.02), (0.0, 0.0, 0.06))], [0, 1]),
    ("an object with no mirror", [P.box((0.4, 0.3, 0.1)), P.box((0.1, 0.05, 0.02), (0.13, 0.1, 0.06)),
                                  P.box((0.05, 0.2, 0.3), (-0.15, 0.0, 0.2))], [0, 1, 0]),
    ("a twin read already", [PALM, *finger(1.0), *finger(-1.0)], [0, 1, 1, 2, 2]),
])
def test_what_has_no_missing_twin_is_left_alone(name, meshes, parts):
    joints = [Joint(f"joint_{p}", "revolute", (0.0, 0.0, 1.0), (0.2, 0.0, 0.05), 0.0, 0.5, 0, p, 0.5)
              for p in sorted(set(parts) - {0})]
    (labels, out), _ = read(meshes, parts, joints)
    assert out == joints and labels.max() == max(parts), name


def test_a_finger_hung_from_its_twin_hangs_with_it_from_the_slide_they_touch():
    slide = P.box((0.2, 0.1, 0.06), (0.1, 0.0, 0.0))  # the fingers stand on its end face
    base = P.box((0.1, 0.2, 0.2), (-0.07, 0.0, 0.0))
    joints = [Joint("joint_1", "prismatic", (1.0, 0.0, 0.0), (0.1, 0.0, 0.0), 0.0, 0.1, 0, 1, 0.8),
              Joint("joint_2", "revolute", (0.0, 0.0, 1.0), (0.2, 0.01, 0.0), 0.0, 0.5, 0, 2, 0.8),  # off the slide
              Joint("joint_3", "revolute", (0.0, 0.0, 1.0), (0.2, -0.01, 0.0), 0.0, 0.5, 2, 3, 0.8)]
    (labels, out), owner = read([base, slide, *finger(1.0), *finger(-1.0)], [0, 1, 2, 2, 3, 3], joints)
    fingers = [np.unique(labels[owner == k]).tolist() for k in (2, 4)]
    assert fingers[0] != fingers[1] and all(len(f) == 1 for f in fingers)
    parent = {j.child: j.parent for j in out}
    assert parent[fingers[0][0]] == parent[fingers[1][0]] == int(np.unique(labels[owner == 1])[0]) != 0


def test_the_halves_of_pliers_keep_their_one_joint():
    halves = [P.box((0.3, 0.03, 0.01), (0.15, s * 0.02, s * 0.005)) for s in (1.0, -1.0)]
    pin = P.cylinder(0.004, 0.02, 12, (0, 0, 1), (0.0, 0.0, 0.0))
    joint = Joint("joint_1", "revolute", (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), -0.5, 0.5, 0, 1, 0.8)
    (labels, out), _ = read([*halves, pin], [1, 0, 0], [joint])
    assert out == [joint] and labels.max() == 1


def test_twins_that_turn_on_each_other_are_left_alone():
    base = P.box((0.1, 0.2, 0.1), (-0.05, 0.0, 0.0))
    blades = [P.box((0.3, 0.02, 0.01), (0.15, s * 0.01, 0.0)) for s in (1.0, -1.0)]  # touching along y = 0
    joints = [Joint("joint_1", "revolute", (0.0, 0.0, 1.0), (0.0, -0.01, 0.0), -0.5, 0.5, 0, 1, 0.8),
              Joint("joint_2", "revolute", (0.0, 0.0, 1.0), (0.0, 0.01, 0.0), -0.5, 0.5, 1, 2, 0.8)]
    (labels, out), _ = read([base, *blades], [0, 2, 1], joints)
    assert out == joints and labels.max() == 2
