"""The bank chart (neurok_ros/simulation/bank_chart.py) on an analytic "decoder" whose lid turns by
z_0^2 - z_1^2 radians (flat at z = 0, like the learned decoder at z_rest): the chart turns it by
q, the pendulum it gives matches scipy's, and the shipped model's lid falls under it; the chart
starts at a finite rate for slower onsets too, and a contact picks the motion it excites most."""
import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from neurok_ros.data.articulated import laptop
from neurok_ros.dynamics.integrate import simulate
from neurok_ros.dynamics.kinematic_map import KinematicMap
from neurok_ros.dynamics.lagrangian import LagrangianSystem
from neurok_ros.dynamics.potentials import Potentials
from neurok_ros.errors import NeurokInputError
from neurok_ros.evaluation.rigid_checks import lid_check
from neurok_ros.kinematics.instance import encode_mesh, load_default_model
from neurok_ros.simulation.bank_chart import bank_chart, excited_offset
from neurok_ros.simulation.predict import predict_motion
from neurok_ros.simulation.settings import settings_from

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]

LID = torch.tensor([[x, y, 0.0] for x in (-0.1, 0.0, 0.1) for y in (0.1, 0.2, 0.3)], dtype=torch.float64)


def flat_lid(z: torch.Tensor, start: float = 0.0) -> torch.Tensor:
    """z (B, 3) -> (B, 9, 3): the lid at `start` rad about the x axis, turned by z_0^2 - z_1^2 more
    (z_2 moves nothing)."""
    angle = start + z[:, 0] ** 2 - z[:, 1] ** 2
    c, s = torch.cos(angle)[:, None], torch.sin(angle)[:, None]
    y, h = LID[None, :, 1], LID[None, :, 2]
    return torch.stack([LID[None, :, 0].expand_as(c * y), c * y - s * h, s * y + c * h], dim=-1)


def lid_angle(points: torch.Tensor) -> torch.Tensor:
    return torch.atan2(points[:, -1, 2], points[:, -1, 1])


def test_the_chart_turns_the_flat_lid_by_q():
    offsets = torch.eye(3, dtype=torch.float64)  # opens, closes, does nothing
    masses = torch.full((len(LID),), 1.0 / len(LID), dtype=torch.float64)
    chart = bank_chart(flat_lid, torch.zeros(3, dtype=torch.float64), offsets, masses, count=3)
    assert chart.num_modes == 1  # the offset that moves nothing adds no mode
    assert chart.alignment.min() > 0.99
    # the power law of the chord |x - x_0| is the square root's, to the chord's bend (2 sin(angle / 2))
    np.testing.assert_allclose(chart.exponents, 2.0, atol=0.05)
    q = torch.linspace(-0.8, 0.8, 9, dtype=torch.float64)[:, None]
    angles = lid_angle(flat_lid(chart.latents(q)))
    sign = float(torch.sign(angles[-1]))
    np.testing.assert_allclose(angles, sign * q[:, 0], atol=0.01)
    # a linear chart through the same offset starts flat: 0.1 latent units turn the lid by 0.01 rad
    assert float(lid_angle(flat_lid(0.1 * offsets[:1]))[0]) == pytest.approx(0.01)
    # with no offset that closes, the mode stops at the rest (a joint limit): -opening would open it
    # again, since the lid turns by z_0^2
    one_sided = bank_chart(flat_lid, torch.zeros(3, dtype=torch.float64), offsets[[0, 2]], masses, count=1)
    assert torch.equal(one_sided.closing, torch.zeros_like(one_sided.closing))
    limited = lid_angle(flat_lid(one_sided.latents(torch.tensor([[-0.5], [0.5]], dtype=torch.float64))))
    np.testing.assert_allclose(limited, [0.0, 0.5], atol=0.01)


def test_the_chart_starts_at_a_finite_rate_whatever_the_decoders_onset():
    # some learned door motions start like t^3-t^4 along their latent offset: a square-root chart
    # would still be flat there (angle ~ q^2 for t^4), the power chart is not
    masses = torch.full((len(LID),), 1.0 / len(LID), dtype=torch.float64)
    for power in (3, 4):
        def slow_lid(z: torch.Tensor, power: int = power) -> torch.Tensor:  # this iteration's power (B023)
            return flat_lid(torch.stack([z[:, 0].abs() ** (power / 2) * torch.sign(z[:, 0]),
                                         z[:, 1].abs() ** (power / 2), z[:, 2]], dim=1))

        chart = bank_chart(slow_lid, torch.zeros(3, dtype=torch.float64), torch.eye(3, dtype=torch.float64),
                           masses, count=1)
        np.testing.assert_allclose(chart.exponents, power, atol=0.05)
        q = torch.tensor([[-0.6], [-1e-3], [1e-3], [0.3], [1.2]], dtype=torch.float64)
        rate = (lid_angle(slow_lid(chart.latents(q))) / q[:, 0]).abs()
        np.testing.assert_allclose(rate[[0, 3, 4]], 1.0, atol=0.02)
        np.testing.assert_allclose(rate[[1, 2]], 1.0, atol=0.1)  # the chord's bend shifts p by 0.02


def test_a_contact_picks_the_bank_motion_it_excites_most():
    # two motions of a lid point: one moves it where the contact pushes, cheaply; one moves it there
    # too but drags heavy points along; one moves it the other way
    changes = torch.zeros(3, 3, 3, dtype=torch.float64)
    changes[0, 0] = torch.tensor([1.0, 0.0, 0.0])
    changes[1, 0] = torch.tensor([1.0, 0.2, 0.0])
    changes[1, 1] = torch.tensor([0.5, 0.0, 0.0])
    changes[2, 0] = torch.tensor([-1.0, 0.0, 0.0])
    masses = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64)
    drive = torch.zeros(3, 3, dtype=torch.float64)
    drive[0, 0] = 1.0
    assert excited_offset(changes, masses, drive) == 0
    assert excited_offset(changes, masses, -drive) == 2
    # held points are heavy: a motion that moves a held point a little loses to one that moves a free
    # point more
    frame = torch.zeros(2, 3, 3, dtype=torch.float64)
    frame[:, 0, 0] = 1.0
    frame[0, 1, 0] = 0.3  # point 1: held, when pinned
    frame[1, 2, 0] = 0.6  # point 2: free
    assert excited_offset(frame, masses, drive) == 0
    assert excited_offset(frame, masses, drive, pinned=torch.tensor([0.0, 1.0, 0.0])) == 1
    assert excited_offset(changes, masses, torch.zeros_like(drive)) is None


def test_the_flat_lid_under_the_chart_is_the_pendulum():
    offsets = torch.eye(3, dtype=torch.float64)[:2]
    masses = torch.full((len(LID),), 1.0 / len(LID), dtype=torch.float64)
    rest = torch.zeros(3, dtype=torch.float64)

    def lid(z: torch.Tensor) -> torch.Tensor:  # released at 0.3 rad above horizontal
        return flat_lid(z, start=0.3)

    chart = bank_chart(lid, rest, offsets, masses, count=1)
    kmap = KinematicMap(lambda q: lid(chart.latents(q[None]))[0], masses, 1,
                        lambda q: lid(chart.latents(q)), "fd", fd_step=1e-4, fd_step2=1e-3)
    times = np.linspace(0.0, 0.6, 37)
    system = LagrangianSystem(kmap, Potentials(gravity=(0.0, 0.0, -9.81)))
    zeros = torch.zeros(1, dtype=torch.float64)
    trajectory = simulate(system, zeros, zeros, times, method="rk4", step_size=1.0 / 600)
    learned = np.unwrap(lid_angle(lid(chart.latents(trajectory.q.double()))).numpy())
    # the rigid lid: I theta'' = -g cos(theta) sum m_i y_i, I = sum m_i y_i^2
    y, m = LID[:, 1].numpy(), masses.numpy()

    def pendulum(_, state):
        return [state[1], -9.81 * float((m * y).sum()) * np.cos(state[0]) / float((m * y ** 2).sum())]

    ideal = solve_ivp(pendulum, (0.0, 0.6), [0.3, 0.0], t_eval=times, rtol=1e-10, atol=1e-12).y[0]
    assert np.degrees(np.sqrt(np.mean((learned - ideal) ** 2))) < 0.5
    assert ideal[-1] < -1.0  # it falls a long way, through the chart's q = 0 side change


def test_a_contact_at_rest_dragged_along_a_path_leaves_the_kink():
    # at rest on q = 0 with qdot = 0 the integrator cannot tell a crossing from a departure; it used to
    # stop at t = 0 with a step-size underflow
    from neurok_ros.dynamics.contact_conditions import ContactConditions
    from neurok_ros.geometry.mesh_io import load_mesh
    from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT

    V, F = load_mesh(DEFAULT_CHECKPOINT.parent / "example_laptop.ply")
    instance = encode_mesh(load_default_model()[0], V, F)
    start = np.array([0.0, 0.2, 0.25])
    path = np.stack([start + [0.0, 0.03 * t, -0.01 * t] for t in (0.5, 1.0)])[:, None, :]
    conditions = ContactConditions([start], [[0.0, 0.0, 0.0]], [0.25, 0.5], path)
    prediction = predict_motion(instance, conditions, settings_from(chart="bank", coordinates=1, duration=0.5,
                                                                    gravity=(0.0, 0.0, 0.0), simulation_points=32))
    assert np.isfinite(prediction.vertices).all() and abs(prediction.q[:, 0]).max() > 0
    assert np.linalg.norm(prediction.vertices[-1] - prediction.vertices[0], axis=1).max() > 1e-3


def test_the_shipped_models_lid_falls_the_right_way_in_the_bank_chart():
    model = load_default_model()[0]
    # one mode, its root polynomial fitted within the bank's motions (|q| <= 1): measured -6.2 degrees at
    # 0.1 s against -8.2 for a rigid lid (the pendulum), 1.5 mm Kabsch RMS (the subspace chart: -7.3 and
    # 32 mm at 0.3 s)
    result = lid_check(model, laptop.generate(7), "laptop seed 7", duration=0.1, pin_fixed=True,
                       settings={"chart": "bank", "coordinates": 1, "surrogate_radius": 1.0})
    assert result["alpha_ideal_rad_s2"] < 0 and result["same_direction_at_0.1s"]
    assert abs(result["angle_learned_at_end_deg"]) > 0.5 * abs(result["angle_ideal_at_end_deg"])
    assert result["lid_kabsch_rms_max_m"] < 0.02 * result["lid_size_m"]  # a turned lid, not a bent one
    inst = laptop.generate(7)
    with pytest.raises(NeurokInputError, match="barrier"):
        settings_from(chart="bank", barrier=1.0)
    plain = load_default_model()[0]
    plain.posterior_bank = None
    instance = encode_mesh(plain, inst.frames[3], inst.faces)
    with pytest.raises(NeurokInputError, match="posterior bank"):
        predict_motion(instance, None, settings_from(chart="bank", duration=0.05))
