"""The shipped model against rigid-body physics on freshly generated articulated objects
(neurok_ros/evaluation/rigid_checks.py; the full table is docs/physics/learned_checks.md).

Measured with the shipped model (one thread): laptop seed 7 posed at 0.95 rad, free fall for 0.1 s:
the lid turns -4.7 degrees (closing) against -7.9 for a rigid lid, staying rigid to 12 mm RMS over a
0.44 m lid; door seed 7 pushed at 0.3 m/s at its edge for 0.2 s: it opens 1.4 degrees against 3.9
for a rigid door (v / r t), with a 0.13% contact-velocity residual.
"""
import pytest

from neurok_ros.data.articulated import door, laptop
from neurok_ros.evaluation.rigid_checks import door_check, lid_check
from neurok_ros.kinematics.instance import load_default_model

pytestmark = [pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def model():
    return load_default_model()[0]


def test_a_laptop_lid_under_gravity_falls_the_right_way(model):
    result = lid_check(model, laptop.generate(7), "laptop seed 7", duration=0.1)
    assert result["alpha_ideal_rad_s2"] < 0  # posed below vertical: a rigid lid falls shut
    assert result["same_direction_at_0.1s"] and result["angle_learned_at_end_deg"] < 0
    assert abs(result["angle_learned_at_end_deg"]) > 0.25 * abs(result["angle_ideal_at_end_deg"])
    assert result["lid_kabsch_rms_max_m"] < 0.05 * result["lid_size_m"]  # it turns, it does not crumple


def test_a_door_pushed_at_its_edge_opens(model):
    result = door_check(model, door.generate(7), "door seed 7", duration=0.2)
    assert result["angle_ideal_at_end_deg"] > 0 and result["angle_learned_at_end_deg"] > 0
    assert result["contact_velocity_residual"] < 0.05
