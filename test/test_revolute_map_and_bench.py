"""The demo's hinge map (latent dynamics on a generated laptop vs a pendulum) and the bench helpers."""
import math

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from neurok_ros.benchmarks.report import write_report
from neurok_ros.benchmarks.timing import CpuShare, measure_interleaved
from neurok_ros.data.categories import all_categories
from neurok_ros.dynamics.integrate import simulate
from neurok_ros.dynamics.lagrangian import LagrangianSystem
from neurok_ros.dynamics.potentials import Potentials
from neurok_ros.dynamics.revolute_map import pendulum_equation, revolute_map

pytestmark = [pytest.mark.unit,
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


def test_revolute_map_turns_children_rigidly_about_the_hinge():
    inst = all_categories()["laptop"][1](0, 4)
    joint = inst.joints[0]
    rmap = revolute_map(inst.rest_vertices, inst.part_ids, joint)
    moving = np.isin(inst.part_ids, joint["child_parts"])
    x0 = rmap.positions_batch(torch.zeros(1, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(x0, inst.rest_vertices, atol=1e-6)
    x = rmap.positions_batch(torch.tensor([0.7], dtype=torch.float64)).numpy()
    np.testing.assert_array_equal(x[~moving], x0[~moving])
    pivot, axis = np.asarray(joint["pivot"]), np.asarray(joint["axis"]) / np.linalg.norm(joint["axis"])
    # Distances to the hinge axis are kept; the turn about the axis is 0.7 rad.
    def radial(p):
        v = p - pivot
        return v - (v @ axis)[:, None] * axis
    np.testing.assert_allclose(np.linalg.norm(radial(x[moving]), axis=1),
                               np.linalg.norm(radial(x0[moving]), axis=1), atol=1e-9)
    a, b = radial(x0[moving])[0], radial(x[moving])[0]
    angle = math.atan2(np.cross(a, b) @ axis, a @ b)
    assert angle == pytest.approx(0.7, abs=1e-9)


def test_lid_falls_shut_like_a_pendulum():
    inst = all_categories()["laptop"][1](0, 4)
    rmap = revolute_map(inst.rest_vertices, inst.part_ids, inst.joints[0])
    masses = torch.full((len(inst.rest_vertices),), 1.5 / len(inst.rest_vertices), dtype=torch.float64)
    gravity = (0.0, 0.0, -9.81)
    system = LagrangianSystem(rmap.kinematic_map(masses), Potentials(gravity=gravity))
    times = np.linspace(0.0, 0.2, 13)
    # Released 60 degrees open (the joint angle is 0 when closed; q is relative to the rest pose).
    q0 = math.radians(60.0) - inst.generator["params"]["rest_joint_values"][0]
    traj = simulate(system, torch.tensor([q0], dtype=torch.float64), torch.zeros(1, dtype=torch.float64),
                    times, method="rk4", step_size=1 / 120)
    ref = solve_ivp(pendulum_equation(rmap, masses.numpy(), gravity), (0.0, 0.2), [q0, 0.0],
                    t_eval=times, method="DOP853", rtol=1e-11, atol=1e-12).y[0]
    assert ref[-1] < q0 - 0.1, "the lid should fall towards closed (the joint angle decreases)"
    np.testing.assert_allclose(traj.q[:, 0].numpy(), ref, atol=1e-5)
    assert traj.energy_drift() < 1e-4


def test_measure_interleaved_and_report(tmp_path):
    calls = []
    with CpuShare() as share:
        rows = measure_interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                                   repeats=3, notes={"b": "note"})
    assert calls == ["a", "b"] * 4  # one warm-up each, then turns
    assert [r.name for r in rows] == ["a", "b"] and rows[1].note == "note" and rows[0].repeats == 3
    assert share.other_cores is None or share.other_cores >= 0.0
    path = write_report(tmp_path / "b.md", {"Group": rows}, "make bench", {"Group": "A note."},
                        share.sentence())
    text = path.read_text()
    assert "Command: `make bench`" in text and "A note." in text and "| b (note) |" in text
    assert "cores" in text and "torch" in text
