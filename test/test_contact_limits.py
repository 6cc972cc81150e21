"""Joint limits where a moving part first runs into the rest of the object (articulation/contact_limits.py)."""
import numpy as np
import pytest
from box_objects import cabinet_drawer, laptop, two_doors

from neurok_ros.articulation.contact_limits import contact_limits

pytestmark = pytest.mark.unit


def test_a_lid_stops_on_its_base_and_a_drawer_at_the_cabinet_back():
    V, F, articulation, facts = laptop(60.0)
    hinge = articulation.joints[0]
    hinge.lower, hinge.upper = -3.0, 3.0  # learned limits far beyond the geometry
    contact_limits(V, F, articulation)
    assert facts["alpha"] <= hinge.upper < facts["alpha"] + np.radians(1.0)  # closed on the base, not through it
    assert hinge.lower < -np.radians(120.0)  # opening backwards is free for a long way

    V, F, articulation, _ = cabinet_drawer(0.2)
    slide = articulation.joints[0]
    slide.lower, slide.upper = -1.0, 0.2
    contact_limits(V, F, articulation)
    assert slide.lower == pytest.approx(-0.03, abs=0.005)  # 3 cm from the back wall
    assert slide.upper == pytest.approx(0.35)  # nothing in the way out: it slides out its own depth

    slide.lower, slide.upper = -1.0, 0.5
    contact_limits(V, F, articulation)
    assert slide.upper == 0.5  # learned motions that went further than the part's depth stand


def test_doors_cannot_close_through_the_cabinet():
    V, F, articulation, _ = two_doors()
    for door in articulation.joints:
        door.lower, door.upper = -0.01, 0.02  # the learned motions barely move a door
    contact_limits(V, F, articulation)
    for door in articulation.joints:
        assert -np.radians(3.0) < door.lower <= 0.0 and door.upper == np.pi  # free outwards: a half turn


def test_an_open_rest_of_the_object_keeps_the_learned_limits():
    V, F, articulation, _ = laptop(60.0)
    hinge = articulation.joints[0]
    hinge.lower, hinge.upper = -3.0, 3.0
    base = np.flatnonzero(articulation.labels[F].max(1) == 0)
    open_faces = np.delete(F, base[:2], axis=0)  # a hole in the base: no inside to run into
    contact_limits(V, open_faces, articulation)
    assert (hinge.lower, hinge.upper) == (-3.0, 3.0)


def _line_distance(joint, point: np.ndarray) -> float:
    offset = point - joint.origin
    return float(np.linalg.norm(offset - (offset @ joint.axis) * joint.axis))


def test_a_hinge_line_through_the_lid_moves_to_where_the_lid_meets_its_base():
    """A line through the lid's middle (as the head's averaged votes give) goes to the lid's edge on
    the base; flush doors, whose lines are already on their contact, stay within millimetres."""
    from neurok_ros.articulation.pivot_placement import place_pivots

    V, F, articulation, facts = laptop(60.0)
    hinge = articulation.joints[0]
    lid = articulation.labels == hinge.child
    hinge.origin = V[lid].mean(0)
    assert _line_distance(hinge, facts["hinge"]) > 0.09
    place_pivots(V, F, articulation, gap=0.005)
    assert _line_distance(articulation.joints[0], facts["hinge"]) < 0.01
    np.testing.assert_allclose(articulation.joints[0].axis, hinge.axis)

    V, F, articulation, _ = two_doors()
    before = [door.origin.copy() for door in articulation.joints]
    place_pivots(V, F, articulation, gap=0.005)
    for door, origin in zip(articulation.joints, before):
        assert _line_distance(door, origin) < 0.005
