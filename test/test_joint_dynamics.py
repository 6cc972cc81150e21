"""The articulated chart against exact references: rigid parts in joint coordinates (docs/physics.md).

Every check runs the user's path (predict_articulated on a mesh and its articulation) and compares
with a solution that does not use the chart: v/r, a pendulum and a double pendulum solved by scipy
from trimesh's mass properties, free fall, a drawer's rail.
"""
import dataclasses

import numpy as np
import pytest
from box_objects import assemble, box, cabinet_drawer, chain, laptop, two_doors
from scipy.integrate import solve_ivp

from neurok_ros.articulation.articulation import Joint
from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import ActionError
from neurok_ros.geometry.mass_properties import equivalent_points, mass_properties
from neurok_ros.simulation.articulated_chart import predict_articulated
from neurok_ros.simulation.settings import PinBox, settings_from

pytestmark = pytest.mark.unit

STILL = dict(gravity=(0.0, 0.0, 0.0), damping=0.0, joint_damping=0.0, joint_friction=0.0)


def rigid_residual(rest: np.ndarray, moved: np.ndarray) -> float:
    """RMS distance (m) of moved (n, 3) from the best rigid motion of rest (n, 3)."""
    a, b = rest - rest.mean(0), moved - moved.mean(0)
    u, _, vt = np.linalg.svd(a.T @ b)
    d = np.sign(np.linalg.det(u @ vt))
    r = u @ np.diag([1, 1, d]) @ vt
    return float(np.sqrt(((a @ r - b) ** 2).sum(1).mean()))


def test_solid_mass_properties_are_exact_for_a_box_in_any_pose():
    """A 0.3 x 0.2 x 0.1 m box of 700 kg/m^3, turned and moved: mass, centre and inertia of the
    closed-form solid, inward-facing triangles included; an open box is a shell instead."""
    import trimesh

    size = np.array([0.3, 0.2, 0.1])
    box = trimesh.creation.box(size)
    turn = trimesh.transformations.rotation_matrix(0.7, [1.0, 2.0, 3.0])[:3, :3]
    V = np.asarray(box.vertices) @ turn.T + [1.0, -2.0, 0.5]
    mass = 700.0 * size.prod()
    expected = turn @ np.diag(mass / 12.0 * ((size**2).sum() - size**2)) @ turn.T
    for faces in (np.asarray(box.faces), np.asarray(box.faces)[:, ::-1]):
        m, centre, inertia, solid = mass_properties(V, faces, density=700.0)
        assert solid and m == pytest.approx(mass, rel=1e-12)
        np.testing.assert_allclose(centre, [1.0, -2.0, 0.5], atol=1e-12)
        np.testing.assert_allclose(inertia, expected, atol=1e-12 * mass)
    assert not mass_properties(V, np.asarray(box.faces)[2:], density=700.0)[3]


def test_equivalent_points_carry_mass_centre_and_inertia():
    mass, centre, inertia, solid = mass_properties(*laptop()[:2])
    points, masses = equivalent_points(mass, centre, inertia)
    r = points - centre
    second = np.einsum("n,ni,nj->ij", masses, r, r)
    assert solid and masses.sum() == pytest.approx(mass)
    np.testing.assert_allclose(masses @ points / mass, centre, atol=1e-12)
    np.testing.assert_allclose(np.trace(second) * np.eye(3) - second, inertia, atol=1e-12)


def test_lid_pushed_at_its_edge_turns_at_v_over_r_and_stops_closed():
    V, F, articulation, facts = laptop(60.0)
    lid = np.asarray(facts["lid"].vertices)
    edge = lid[np.argmax(lid[:, 2])]  # the free edge, highest point
    radius = np.linalg.norm((edge - facts["hinge"])[1:])
    tangent = np.cross(facts["axis"], edge - facts["hinge"])  # closing direction (q > 0)
    tangent /= np.linalg.norm(tangent)
    speed = 0.3
    settings = settings_from(STILL, duration=1.0, fps=60.0)
    prediction = predict_articulated(V, F, articulation, ContactConditions(edge[None], speed * tangent[None]),
                                     settings)
    q = prediction.q[:, 0]
    closing_time = facts["alpha"] / (speed / radius)
    before = prediction.times < closing_time - 0.02
    rate = np.diff(q[before]) / np.diff(prediction.times[before])
    assert np.abs(rate / (speed / radius) - 1.0).max() < 0.01
    assert prediction.summary["contact_velocity_residual"] < 1e-6
    after = prediction.times > closing_time + 0.02
    np.testing.assert_allclose(q[after], facts["alpha"], atol=1e-9)  # an inelastic stop at the closed limit
    moving = articulation.labels == 1
    assert np.abs(prediction.vertices[:, ~moving] - V[~moving]).max() < 1e-6  # the anchored base stays
    assert rigid_residual(V[moving], prediction.vertices[-1, moving]) < 1e-6
    closed = prediction.vertices[-1, moving]
    assert closed[:, 2].min() == pytest.approx(0.02, abs=1e-4)  # lying on the base


def test_a_push_next_to_the_hinge_line_is_held_back_not_spun_up():
    V, F, articulation, facts = laptop(60.0)
    lid = np.asarray(facts["lid"].vertices)
    edge = lid[np.argmax(lid[:, 2])]
    near = facts["hinge"] + 1e-4 * (edge - facts["hinge"]) / np.linalg.norm(edge - facts["hinge"])  # 0.1 mm off
    tangent = np.cross(facts["axis"], near - facts["hinge"])
    speed = 0.3
    prediction = predict_articulated(V, F, articulation, ContactConditions(near[None], speed * tangent[None] /
                                                                           np.linalg.norm(tangent)),
                                     settings_from(STILL, duration=0.2, fps=60.0))
    rate = (prediction.q[1, 0] - prediction.q[0, 0]) / (prediction.times[1] - prediction.times[0])
    assert np.isfinite(prediction.vertices).all()
    assert 0.0 < rate < 0.1 * speed / 1e-4  # it turns the right way, far below the 3000 rad/s of v/r
    assert prediction.summary["contact_velocity_residual"] > 0.5  # and says the push was not followed


def test_lid_falls_like_an_independent_pendulum_and_stops_at_its_limit():
    V, F, articulation, facts = laptop(60.0)
    settings = settings_from(duration=1.0, fps=120.0, gravity=(0.0, 0.0, -9.81), damping=0.0, joint_damping=0.0,
                             joint_friction=0.0, mass=1.0)
    prediction = predict_articulated(V, F, articulation, None, settings)
    lid, base = facts["lid"], facts["base"]
    lid_mass = lid.volume / (lid.volume + base.volume)  # of the 1 kg object, uniform density
    centre = lid.center_mass - facts["hinge"]
    inertia_x = lid.moment_inertia[0, 0] / lid.mass * lid_mass + lid_mass * (centre[1] ** 2 + centre[2] ** 2)

    def pendulum(t, y):  # q about +x turns the centre (y, z) by q; V = m g z
        q, rate = y
        z_gradient = centre[1] * np.cos(q) - centre[2] * np.sin(q)  # d z / d q
        return [rate, -lid_mass * 9.81 * z_gradient / inertia_x]

    closes = lambda t, y: y[0] - facts["alpha"]  # noqa: E731
    closes.terminal = True
    reference = solve_ivp(pendulum, (0, 1.0), [0.0, 0.0], rtol=1e-10, atol=1e-12, dense_output=True, events=closes)
    t_close = reference.t_events[0][0]
    before = prediction.times < t_close
    error = prediction.q[before, 0] - reference.sol(prediction.times[before])[0]
    assert np.degrees(np.sqrt(np.mean(error ** 2))) < 0.5
    assert 0.1 < t_close < 0.9
    after = prediction.times > t_close + 0.02
    np.testing.assert_allclose(prediction.q[after, 0], facts["alpha"], atol=1e-9)


def test_drawer_pulled_slides_along_its_rail_at_the_pull_speed_until_its_limit():
    V, F, articulation, facts = cabinet_drawer(0.2)
    front = np.array([0.0, 0.2, 0.15])
    speed = 0.3
    prediction = predict_articulated(V, F, articulation, ContactConditions(front[None], [[0.0, speed, 0.0]]),
                                     settings_from(STILL, duration=1.0, fps=60.0))
    drawer = articulation.labels == 1
    shift = (prediction.vertices[:, drawer] - V[drawer]).mean(1)  # (T, 3)
    end = facts["travel"] / speed
    early = (prediction.times > 0) & (prediction.times < end - 0.02)
    velocity = np.diff(shift, axis=0) / np.diff(prediction.times)[:, None]
    assert np.abs(np.linalg.norm(velocity[early[1:]], axis=1) / speed - 1).max() < 0.01
    direction = shift[early][-1] / np.linalg.norm(shift[early][-1])
    assert np.degrees(np.arccos(min(1.0, direction @ facts["axis"]))) < 1.0
    assert shift[-1] @ facts["axis"] == pytest.approx(facts["travel"], abs=1e-6)  # stopped at its limit
    assert np.abs(prediction.vertices[:, ~drawer] - V[~drawer]).max() < 1e-6


def _double_pendulum(facts, masses):
    """Independent solve of the two links (planar, about x, from the horizontal at rest): (t, q1, q2)."""
    (link1, link2), (first, _) = facts["links"], facts["lengths"]
    m1, m2 = masses
    lc1 = -(link1.center_mass[1] - 0.0)
    lc2 = -(link2.center_mass[1] + first)
    i1 = link1.moment_inertia[0, 0] / link1.mass * m1
    i2 = link2.moment_inertia[0, 0] / link2.mass * m2
    g = 9.81

    def rhs(t, y):
        q1, q2, w1, w2 = y
        c2, s2 = np.cos(q2), np.sin(q2)
        m11 = i1 + i2 + m1 * lc1 ** 2 + m2 * (first ** 2 + lc2 ** 2 + 2 * first * lc2 * c2)
        m12 = i2 + m2 * (lc2 ** 2 + first * lc2 * c2)
        m22 = i2 + m2 * lc2 ** 2
        h = m2 * first * lc2 * s2
        coriolis = np.array([-h * (2 * w1 * w2 + w2 ** 2), h * w1 ** 2])
        # V = -g [m1 lc1 sin q1 + m2 (l1 sin q1 + lc2 sin(q1 + q2))]: links start along -y, q turns about +x
        gravity = -g * np.array([(m1 * lc1 + m2 * first) * np.cos(q1) + m2 * lc2 * np.cos(q1 + q2),
                                 m2 * lc2 * np.cos(q1 + q2)])
        acc = np.linalg.solve([[m11, m12], [m12, m22]], -coriolis - gravity)
        return [w1, w2, *acc]

    return rhs


def test_two_joint_chain_matches_an_independent_solve_and_keeps_its_energy():
    V, F, articulation, facts = chain()
    settings = settings_from(duration=3.0, fps=100.0, gravity=(0.0, 0.0, -9.81), damping=0.0, joint_damping=0.0,
                             joint_friction=0.0, mass=1.0, step_size=0.0025)
    prediction = predict_articulated(V, F, articulation, None, settings)
    volumes = [part.volume for part in (facts["mount"], *facts["links"])]
    masses = np.array(volumes[1:]) / sum(volumes)
    reference = solve_ivp(_double_pendulum(facts, masses), (0, 3.0), [0, 0, 0, 0], t_eval=prediction.times,
                          rtol=1e-11, atol=1e-12)
    window = prediction.times <= 2.0
    error = prediction.q[window] - reference.y[:2, window].T
    assert np.degrees(np.sqrt(np.mean(error ** 2))) < 1.0
    energy = prediction.energy[:, 2]
    swing = np.abs(prediction.energy[:, 1] - prediction.energy[0, 1]).max()
    assert np.abs(energy - energy[0]).max() < 1e-3 * swing  # T + V drifts <= 0.1% over 3 s
    assert prediction.summary["energy_drift"] < 1e-3


def test_free_base_falls_at_g_and_an_anchored_one_does_not():
    V, F, articulation, _ = laptop(60.0)
    settings = settings_from(duration=0.5, fps=50.0, gravity=(0.0, 0.0, -9.81), free_base=True, damping=0.0)
    prediction = predict_articulated(V, F, articulation, None, settings)
    weights = np.array(prediction.summary["part_masses_kg"]).repeat(6) / 6  # six equivalent points per part
    centre = np.einsum("n,tni->ti", weights, prediction.points[:, :len(weights)]) / weights.sum()
    drop = centre[0, 2] - centre[:, 2]
    expected = 0.5 * 9.81 * prediction.times ** 2
    assert np.abs(drop[1:] / expected[1:] - 1).max() < 0.01
    anchored = predict_articulated(V, F, articulation, None, dataclasses.replace(settings, free_base=False))
    assert np.abs(anchored.vertices[:, articulation.labels == 0] - V[articulation.labels == 0]).max() < 1e-6


def test_each_door_moves_only_when_pulled():
    V, F, articulation, _ = two_doors()
    left_edge, right_edge = np.array([-0.01, 0.22, 0.2]), np.array([0.01, 0.22, 0.2])
    settings = settings_from(STILL, duration=0.5, fps=30.0)
    one = predict_articulated(V, F, articulation, ContactConditions(left_edge[None], [[0.0, 0.3, 0.0]]), settings)
    assert one.q[-1, 0] > 0.5 and np.abs(one.q[:, 1]).max() == 0.0
    both = predict_articulated(V, F, articulation,
                               ContactConditions(np.stack([left_edge, right_edge]), [[0.0, 0.3, 0.0]] * 2), settings)
    np.testing.assert_allclose(both.q[-1, 0], both.q[-1, 1], rtol=1e-9)
    assert both.q[-1, 0] == pytest.approx(one.q[-1, 0], rel=1e-9)


def test_a_push_on_the_anchored_base_is_reported_and_moves_nothing():
    V, F, articulation, _ = two_doors()
    base = V[articulation.labels == 0]
    base_point = base[np.argmin(base[:, 1])]  # on its back wall
    settings = settings_from(STILL, duration=0.2, fps=30.0)
    on_base = predict_articulated(V, F, articulation, ContactConditions(base_point[None], [[0.0, 0.3, 0.0]]),
                                  settings)
    assert on_base.summary["actions_on_held_parts"] == 1 and "anchored" in on_base.summary["actions_on_held_parts_note"]
    assert np.abs(on_base.vertices - V).max() < 1e-6  # float32 output
    door = predict_articulated(V, F, articulation, ContactConditions(np.array([[-0.01, 0.22, 0.2]]), [[0, 0.3, 0]]),
                               settings)
    assert door.summary["actions_on_held_parts"] == 0 and "actions_on_held_parts_note" not in door.summary
    free = predict_articulated(V, F, articulation, ContactConditions(base_point[None], [[0.0, 0.3, 0.0]]),
                               dataclasses.replace(settings, free_base=True))
    assert free.summary["actions_on_held_parts"] == 0 and np.abs(free.vertices[-1] - V).max() > 0.01


def test_a_pin_box_holds_the_part_it_grips_and_an_empty_box_is_refused():
    V, F, articulation, facts = laptop(60.0)
    lid = np.asarray(facts["lid"].vertices)
    corner = lid[np.argmax(lid[:, 2])]
    grip = PinBox(tuple(corner - 1e-4), tuple(corner + 1e-4))  # one vertex of the lid
    settings = settings_from(duration=0.5, fps=30.0, gravity=(0.0, 0.0, -9.81), pins=(grip,))
    held = predict_articulated(V, F, articulation, None, settings)
    assert np.abs(held.vertices - V).max() < 1e-6 and held.summary["locked_joints"] == ["hinge"]
    empty = dataclasses.replace(settings, pins=(PinBox((1.0, 1.0, 1.0), (1.1, 1.1, 1.1)),))
    with pytest.raises(ActionError, match="holds no vertex"):
        predict_articulated(V, F, articulation, None, empty)


def test_restitution_and_friction_act_at_the_joint():
    V, F, articulation, facts = laptop(60.0)
    lid = np.asarray(facts["lid"].vertices)
    edge = lid[np.argmax(lid[:, 2])]
    tangent = np.cross(facts["axis"], edge - facts["hinge"])
    velocity = 0.3 * tangent / np.linalg.norm(tangent)
    contact = ContactConditions(edge[None], velocity[None])
    bounce = predict_articulated(V, F, articulation, contact, settings_from(STILL, duration=1.5, restitution=1.0))
    assert bounce.q[-1, 0] < facts["alpha"] - 0.3 and bounce.summary["energy_drift"] < 1e-3  # back, energy kept
    gravity = dict(gravity=(0.0, 0.0, -9.81), damping=0.0, joint_damping=0.0, duration=1.0)
    stuck = predict_articulated(V, F, articulation, None, settings_from(gravity, joint_friction=10.0))
    assert np.abs(stuck.q).max() < 1e-9  # 10 N m outweighs gravity's pull on a 0.3 kg lid
    slides = predict_articulated(V, F, articulation, None, settings_from(gravity, joint_friction=0.05))
    free = predict_articulated(V, F, articulation, None, settings_from(gravity, joint_friction=0.0))
    assert 0 < slides.q[3, 0] < free.q[3, 0]


def test_the_push_check_passes_the_true_joints_and_fails_a_wrong_axis():
    """evaluation/push_checks.py, the through-the-readout check of docs/physics.md: with the object's
    own parts and joints a push is right; with the hinge axis turned 30 degrees it is not."""
    from neurok_ros.articulation.articulation import Joint
    from neurok_ros.articulation.evaluation import TrueJoint
    from neurok_ros.evaluation.push_checks import push_check

    V, F, articulation, _ = laptop(60.0)
    hinge = articulation.joints[0]
    truth = TrueJoint(hinge.name, hinge.type, hinge.axis, hinge.origin, articulation.labels == 1, -1.0)
    assert push_check(articulation, truth, V, F, truth.room)["push_success"]
    tilted = np.array([np.cos(np.radians(30)), np.sin(np.radians(30)), 0.0])
    articulation.joints = [Joint(hinge.name, "revolute", tilted, hinge.origin, hinge.lower, hinge.upper, 0, 1, 1.0)]
    row = push_check(articulation, truth, V, F, truth.room)
    assert not row["push_success"] and row["push_axis_deg"] > 15


def test_the_push_check_reads_the_axis_of_a_turn_up_to_and_past_a_half_turn():
    """A cap twisted to its limit of a half turn: the rotation's antisymmetric part vanishes there,
    its axis does not."""
    from neurok_ros.dynamics.joint_tree import rotation
    from neurok_ros.evaluation.push_checks import motion_axis

    axis = np.array([0.36, -0.48, 0.8])
    for degrees in (30.0, 179.0, 180.0, 250.0):
        turn, found = motion_axis(rotation(axis, np.radians(degrees)), np.zeros(3))
        assert turn == pytest.approx(min(degrees, 360.0 - degrees), abs=1e-6)
        assert abs(found @ axis) == pytest.approx(1.0, abs=1e-9)


def _lamp_chain(limit: float):
    """A 4 cm block, four light 10 cm rods and a heavy 10 cm head on a chain of five revolute joints
    with skew axes, each within +-limit rad (a desk lamp's links, as a readout may give them)."""
    axes = [[-0.73, -0.54, -0.32], [0.41, 1.04, -0.13], [1.37, -0.67, 0.35], [0.9, 0.09, -0.74],
            [-0.92, -0.46, 0.22]]
    parts, joints, z = [box([-0.02, -0.02, 0.0], [0.02, 0.02, 0.04])], [], 0.04
    for i, axis in enumerate(axes):
        half, length = (0.004, 0.1) if i < 4 else (0.05, 0.1)
        parts.append(box([-half, -half, z], [half, half, z + length]))
        joints.append(Joint(f"joint_{i + 1}", "revolute", axis, [0.0, 0.0, z], -limit, limit, i, i + 1, 1.0))
        z += length
    return assemble(parts, joints)


def test_a_chain_held_on_its_limits_never_gains_energy():
    V, F, articulation = _lamp_chain(0.3)
    tip = V[np.argmax(V[:, 2])]
    contact = ContactConditions(tip[None], np.array([[0.3, 0.2, 0.0]]))
    prediction = predict_articulated(V, F, articulation, contact, settings_from(STILL, duration=1.0, fps=10.0))
    energy = prediction.energy[:, 2]
    assert np.isfinite(prediction.q).all() and prediction.summary["impacts"] > 10
    assert np.all(np.diff(energy) <= 1e-5 * energy[0])  # every stop takes energy, none adds it (was +5%)
    assert np.abs(prediction.q).max() <= 0.3 + 1e-12


def shown_truth(category: str, seed: int):
    """A procedural instance at the pose eval-articulation shows (frame T // 3): the instance, its
    vertices (n, 3) float64, its own Articulation and its true joints."""
    from neurok_ros.articulation.evaluation import true_articulation, true_joints
    from neurok_ros.data.articulated import ARTICULATED_CATEGORIES

    instance = ARTICULATED_CATEGORIES[category](seed, 16)
    shown = instance.num_frames // 3
    return (instance, instance.frames[shown].astype(np.float64), true_articulation(instance, shown),
            true_joints(instance, shown))


@pytest.mark.parametrize("category,seed", [("laptop", 3), ("refrigerator", 10), ("cabinet", 2)])
def test_pushes_through_the_true_articulation_move_the_right_part(category, seed):
    """The push check of `neurok eval-articulation --push --truth`: a procedural object's own parts
    and joints score perfectly, and every true moving part pushed along its joint turns or slides
    about that joint, rigidly, with the rest still (a door pushed leaves its sibling alone)."""
    from neurok_ros.articulation.evaluation import score_readout
    from neurok_ros.evaluation.push_checks import push_check

    instance, vertices, readout, truth = shown_truth(category, seed)
    assert len(readout.joints) == len(truth) >= 1
    for row, joint in zip(score_readout(readout, truth, vertices), truth):
        assert row["type"] and row["axis_deg"] < 1e-6 and row["child_iou"] == 1.0
        assert row["pivot"] is None or row["pivot"] < 1e-6
        assert push_check(readout, joint, vertices, instance.faces, joint.room)["push_success"], joint.name


def test_a_pushed_link_of_a_free_chain_drags_the_others():
    """A lamp's links on free joints: pushing the last link along its own joint moves the links
    above it too (momentum goes where the joints let it), so the push check's "rest still" fails
    even for the true articulation, as the physics demands."""
    from neurok_ros.evaluation.push_checks import push_check

    instance, vertices, readout, truth = shown_truth("lamp", 4)
    last = min(truth, key=lambda joint: joint.moved.sum())
    row = push_check(readout, last, vertices, instance.faces, last.room)
    assert row["push_moves"] and row["push_axis_deg"] <= 15.0 and not row["push_still"]
