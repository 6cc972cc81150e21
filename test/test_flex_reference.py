"""The MuJoCo flex ground truth of issue 44 (neurok_ros/evaluation/flex_reference.py) behaves physically.

Checks against closed forms, on the meshes the soft-poke comparison uses (no model involved):
- a clamped silicone beam sags under its own weight to Euler-Bernoulli's static deflection and
  vibrates at its first bending frequency (within 15%), and its clamped vertices never move;
- a free flex falls 1/2 g t^2 (to MuJoCo's first-order step) without deforming;
- a push of F for dt gives a free flex the momentum F dt, and it keeps its spin (no numerical braking);
- the vertex order and the frame times are the input mesh's and i / fps.
"""
import numpy as np
import pytest

from neurok_ros.evaluation.flex_reference import (
    FlexMaterial,
    FlexPoke,
    beam_volume,
    blob_volume,
    cantilever_theory,
    closest_surface_point,
    dominant_angular_frequency,
    flex_reference,
    mesh_volume,
    tetrahedralise,
)

pytestmark = pytest.mark.unit

LENGTH, WIDTH, HEIGHT = 0.4, 0.08, 0.08
CLAMP = (((-1e-3, -1.0, -1.0), (1e-3, 1.0, 1.0)),)


@pytest.fixture(scope="module")
def beam():
    return beam_volume(LENGTH, WIDTH, HEIGHT)


@pytest.fixture(scope="module")
def ball():
    return blob_volume((0.12, 0.12, 0.12), 5)


def test_beam_volume_puts_the_surface_first_and_closes_it(beam):
    V, F, volume = beam
    assert np.array_equal(volume.points[:len(V)], V)
    assert mesh_volume(V, F) == pytest.approx(LENGTH * WIDTH * HEIGHT, rel=1e-9)
    edges = np.sort(np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]]), axis=1)
    assert np.all(np.unique(edges, axis=0, return_counts=True)[1] == 2)  # closed: every edge in two faces


def test_clamped_beam_sags_and_vibrates_like_euler_bernoulli(beam):
    V, F, volume = beam
    material = FlexMaterial(damping=0.0)
    theory = cantilever_theory(LENGTH, WIDTH, HEIGHT, material)
    ref = flex_reference(V, F, material, pins=CLAMP, duration=2.0, fps=100.0, volume=volume)
    tip = V[:, 0] > LENGTH - 1e-9
    sag = -(ref.vertices[:, tip, 2].astype(np.float64).mean(axis=1) - V[tip, 2].mean())
    # released straight, undamped: it oscillates between 0 and twice the static sag about the static sag
    assert sag[50:].mean() == pytest.approx(theory["tip_sag_m"], rel=0.15)
    assert sag.max() == pytest.approx(2.0 * theory["tip_sag_m"], rel=0.25)
    omega = dominant_angular_frequency(ref.vertices, V, ref.times)
    assert omega == pytest.approx(theory["omega1_rad_s"], rel=0.15)
    clamped = V[:, 0] <= 1e-9
    assert np.array_equal(ref.pinned, clamped)
    assert np.abs(ref.vertices[:, clamped] - V[clamped]).max() < 1e-6
    assert np.allclose(ref.times, np.arange(201) / 100.0)
    assert ref.vertices.dtype == np.float32 and ref.vertices.shape == (201, len(V), 3)
    assert ref.diagnostics["underconverged_steps"] == 0


def test_free_flex_falls_half_g_t_squared(ball):
    V, F, volume = ball
    ref = flex_reference(V, F, FlexMaterial(young=5e4, density=1000.0), duration=0.5, fps=10.0, volume=volume,
                         cellcount=(2, 2, 2))
    drop = V[:, 2].mean() - ref.vertices[:, :, 2].astype(np.float64).mean(axis=1)
    t, dt = ref.times, ref.diagnostics["timestep"]
    # MuJoCo's step is semi-implicit Euler (velocity first): 1/2 g t (t + dt), 1/2 g t^2 as dt -> 0
    assert np.allclose(drop, 0.5 * 9.81 * t * (t + dt), rtol=0.0, atol=1e-6)
    assert np.allclose(drop, 0.5 * 9.81 * t ** 2, rtol=0.0, atol=0.5 * 9.81 * t[-1] * dt + 1e-6)
    shape = ref.vertices[-1] - ref.vertices[-1].mean(axis=0) - (V - V.mean(axis=0))
    assert np.abs(shape).max() < 1e-4  # uniform gravity does not deform a free body


def test_a_push_gives_a_free_flex_its_impulse_and_it_keeps_its_spin(ball):
    V, F, volume = ball
    material = FlexMaterial(young=5e4, density=1000.0, damping=0.0)
    push = FlexPoke(point=(0.06, 0.0, 0.0), force=(0.0, 3.0, 0.0), t0=0.0, t1=0.1)
    ref = flex_reference(V, F, material, pokes=(push,), gravity=(0.0, 0.0, 0.0), duration=1.0, fps=20.0,
                         volume=volume, cellcount=(2, 2, 2))
    mass = material.density * mesh_volume(V, F)
    assert ref.mass == pytest.approx(mass)
    # the vertices' mean follows the centre of mass only roughly (mass sits on the flex points): fit a line
    # to it after the push, whose slope is the momentum over the mass
    after = ref.times >= 0.2
    slope = np.polyfit(ref.times[after], ref.vertices[after].astype(np.float64).mean(axis=1)[:, 1], 1)[0]
    assert slope == pytest.approx(3.0 * 0.1 / mass, rel=0.03)

    def turn(frame):  # rotation angle about z of the best rigid fit rest -> frame
        a, b = V - V.mean(0), frame - frame.mean(0)
        return np.arctan2((a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]).sum(), (a[:, :2] * b[:, :2]).sum())

    angles = np.unwrap([turn(f.astype(np.float64)) for f in ref.vertices])
    rates = np.diff(angles[after]) / np.diff(ref.times[after])
    assert rates.mean() > 5.0  # rad/s: the off-centre push spins it about z
    assert rates[-3:].mean() == pytest.approx(rates[:3].mean(), rel=0.05)


@pytest.mark.parametrize("dof", ["full", "quadratic"])
def test_a_velocity_poke_starts_the_patch_at_that_velocity(beam, dof):
    V, F, volume = beam
    poke = FlexPoke(point=(LENGTH, 0.0, 0.0), velocity=(0.0, 0.3, 0.0), radius=0.03)
    # undamped: Rayleigh damping (beta K) stops a patch moving against its neighbours within 0.1 ms
    ref = flex_reference(V, F, FlexMaterial(damping=0.0), pokes=(poke,), pins=CLAMP, gravity=(0.0, 0.0, 0.0),
                         duration=1e-4, fps=1e4, volume=volume, dof=dof, max_timestep=1e-5)
    patch = np.linalg.norm(V - np.array([LENGTH, 0.0, 0.0]), axis=1) <= 0.03
    assert patch.sum() == 4
    moved = (ref.vertices[1].astype(np.float64) - V) / 1e-4  # m/s over the first 0.1 ms
    assert np.allclose(moved[patch], [0.0, 0.3, 0.0], atol=0.015)
    assert np.abs(moved[V[:, 0] < LENGTH / 2]).max() < 0.003


def test_pins_that_hold_nothing_are_refused(beam):
    V, F, volume = beam
    with pytest.raises(ValueError, match="holds no"):
        flex_reference(V, F, pins=(((1.0, 1.0, 1.0), (2.0, 2.0, 2.0)),), duration=0.1, volume=volume)


def test_tetrahedralise_fills_a_closed_mesh(ball):
    V, F, _ = ball
    volume = tetrahedralise(V, F)
    a, b, c, d = (volume.points[volume.tets[:, i]] for i in range(4))
    filled = np.abs(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a)).sum() / 6.0
    assert filled == pytest.approx(mesh_volume(V, F), rel=0.01)  # the ball is almost convex: slivers at most
    assert np.array_equal(volume.points[:len(V)], V)


def test_closest_surface_point_weights(beam):
    V, F, _ = beam
    face, weights, distance = closest_surface_point(V, F, (LENGTH + 0.01, 0.0, 0.0))
    assert distance == pytest.approx(0.01)
    assert weights @ V[F[face]] == pytest.approx([LENGTH, 0.0, 0.0], abs=1e-9)


def test_the_command_line_names_every_scenario():
    from neurok_ros.cli.soft_eval_command import SCENARIO_NAMES
    from neurok_ros.evaluation.soft_poke import SCENARIOS

    assert set(SCENARIO_NAMES) == set(SCENARIOS)
