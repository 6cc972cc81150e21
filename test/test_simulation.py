"""Simulation of a learned instance (neurok_ros.simulation) and `neurok simulate`, with the shipped
model on the bundled example laptop (482 vertices), few simulation points and short runs.

The example laptop here has no articulation: it is a soft body in the latent chart, carried by a
free rigid body (docs/physics.md section 6). The bounds below are the tests'; docs/physics.md has
the measured values.
"""
import json

import numpy as np
import pytest
import torch

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.cli import main as neurok_main
from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.dynamics.potentials import potential_energy, potential_gradient
from neurok_ros.errors import ActionError, NeurokInputError
from neurok_ros.geometry.mesh_io import load_mesh
from neurok_ros.geometry.rigid_alignment import rigid_alignment
from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT, encode_mesh, load_default_model
from neurok_ros.simulation.dense_output import interpolate_states
from neurok_ros.simulation.drag_path import read_drag_path, write_drag_path_csv
from neurok_ros.simulation.learned_map import learned_kinematic_map
from neurok_ros.simulation.output_decoding import decode_frames
from neurok_ros.simulation.predict import predict_motion
from neurok_ros.simulation.settings import PushSpec, default_settings, settings_from
from neurok_ros.visualisation.energy_plot import plot_energy
from neurok_ros.visualisation.gltf_animation import (
    CHUNK_BIN,
    CHUNK_JSON,
    GLB_MAGIC,
    accessor_array,
    read_glb,
    write_animated_glb,
)

EXAMPLE = DEFAULT_CHECKPOINT.parent / "example_laptop.ply"
LID_TOP = (0.0, 0.2, 0.25)  # near the top edge of the example laptop's lid (mesh frame, metres)
pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


@pytest.fixture(scope="module")
def laptop():
    model = load_default_model()[0]
    V, F = load_mesh(EXAMPLE)
    return V, F, encode_mesh(model, V, F)


def _fast(**changes):
    """Few points, short runs: the test-size settings."""
    base = dict(simulation_points=32, duration=0.1, fps=30.0, method="rk4", step_size=1 / 120)
    return settings_from({**base, **changes})


def test_map_points_at_rest_are_the_decoded_input_pose_in_metres(laptop):
    V, F, instance = laptop
    learned = learned_kinematic_map(instance, points=48, mass=2.0, coordinates=4, inertia_ratio=0.01,
                                    extra_points=[LID_TOP])
    kmap = learned.kmap
    q0 = torch.zeros(kmap.num_coords, dtype=torch.float64)
    x0 = kmap.positions(q0)
    assert x0.shape == (49, 3) and x0.dtype == torch.float64
    # rest-anchored: q = 0 is the input surface itself (samples and the contact point), in metres
    points = np.concatenate([learned.samples.points, [LID_TOP]])
    np.testing.assert_allclose(x0.detach().numpy(), points, atol=1e-5)
    torch.testing.assert_close(learned.rest_positions, x0.detach())
    # while the raw decoder at z_rest reproduces them up to its error (~1% of the 0.54 m diagonal)
    normalised = torch.as_tensor(instance.transform.apply(points), dtype=torch.float32)
    with torch.no_grad():
        raw = instance.model.decode_positions(instance.rest_latent[None], instance.model.prepare_queries(normalised),
                                              instance.shape_tokens)[0].double().numpy()
    raw_error = np.abs(instance.transform.invert(raw) - points).max()
    diagonal = np.linalg.norm(V.max(0) - V.min(0))
    assert 1e-4 < raw_error < 0.03 * diagonal
    assert float(kmap.masses.sum()) == pytest.approx(2.0) and float(kmap.masses[48]) == 0.0
    assert torch.allclose(kmap.masses[:48], torch.full((48,), 2.0 / 48, dtype=torch.float64))
    # the simulated directions: orthonormal in the latent space, largest inertia first
    basis = learned.basis
    torch.testing.assert_close(basis.T @ basis, torch.eye(kmap.num_coords, dtype=torch.float64), atol=1e-5, rtol=0)
    assert torch.all(learned.inertia[:-1] >= learned.inertia[1:])


def test_barrier_measures_the_distance_to_the_prior_mean(laptop):
    _, _, instance = laptop
    learned = learned_kinematic_map(instance, points=16, coordinates=3, inertia_ratio=0.0)
    potentials = learned.potentials((0.0, 0.0, 0.0), 0.0, barrier=0.5)
    q = torch.tensor([0.3, -0.2, 0.1], dtype=torch.float64)
    z = instance.latent(learned.instance_coordinates(q).float()).double()
    x = learned.kmap.positions(q).detach()
    energy = potential_energy(potentials, x, q, learned.kmap.masses)
    assert float(energy) == pytest.approx(0.25 * float(((z - instance.prior_mean.double()) ** 2).sum()), rel=1e-5)
    jac = torch.zeros(x.numel(), 3, dtype=torch.float64)  # the barrier does not use J
    grad = potential_gradient(potentials, x, jac, q, learned.kmap.masses)
    step = 1e-4
    numeric = torch.stack([(potential_energy(potentials, x, q + step * e, learned.kmap.masses)
                            - potential_energy(potentials, x, q - step * e, learned.kmap.masses)) / (2 * step)
                           for e in torch.eye(3, dtype=torch.float64)])
    torch.testing.assert_close(grad, numeric, rtol=1e-6, atol=1e-9)


def test_free_motion_conserves_energy(laptop):
    _, F, instance = laptop
    # the anchor spring holds the carried body, so gravity sags it against the spring and the strain
    settings = _fast(duration=0.4, stiffness=625.0, anchor_stiffness=625.0, damping=0.0, gravity=(0.0, 0.0, -9.81))
    prediction = predict_motion(instance, None, settings)
    summary = prediction.summary
    T = settings.num_frames
    assert T == 13 and prediction.vertices.shape == (T, len(instance.vertices), 3)
    assert prediction.vertices.dtype == np.float32 and prediction.energy.shape == (T, 3)
    np.testing.assert_array_equal(prediction.faces, F)
    np.testing.assert_allclose(prediction.vertices[0], instance.decode(), atol=1e-5)  # q(0) = 0
    kinetic, potential, total = prediction.energy.T
    assert kinetic[0] == 0.0 and kinetic.max() > 1e-3  # it moves
    exchanged = np.abs(potential - potential[0]).max()
    assert np.abs(total - total[0]).max() < 0.02 * exchanged
    assert summary["energy_drift"] < 0.02
    assert summary["rhs_evaluations"] == 4 * 48
    assert summary["interpolated_frames"] is False


def test_pin_box_and_vertex_mask_select_the_same_points(laptop):
    """A box around the laptop's bottom slab and the mask of its vertices pin points there and only
    there; the motion keeps T + V with the pin term in V."""
    V, F, instance = laptop
    bottom = V[:, 2] < V[:, 2].min() + 0.02
    box = {"lower": tuple(V[bottom].min(0) - 1e-3), "upper": tuple(V[bottom].max(0) + 1e-3)}
    settings = _fast(duration=0.2, method="dp45", pins=[box])
    held = predict_motion(instance, None, settings)
    by_mask = predict_motion(instance, None, _fast(duration=0.2, method="dp45"), pinned_vertices=bottom)
    assert held.summary["pinned_points"] == by_mask.summary["pinned_points"] > 0
    assert predict_motion(instance, None, _fast(duration=0.1)).summary["pinned_points"] == 0
    points = held.summary["simulation_points"]
    rest = held.points[0, :points]
    inside = np.all((rest >= np.array(box["lower"])) & (rest <= np.array(box["upper"])), axis=1)
    assert inside.sum() == held.summary["pinned_points"]
    assert held.summary["energy_drift"] < 0.02
    with pytest.raises(NeurokInputError, match="pinned_vertices must have shape"):
        predict_motion(instance, None, settings, pinned_vertices=bottom[:-1])


def test_a_pin_box_around_one_vertex_holds_there_and_an_empty_box_is_refused(laptop):
    """Pins act on the mesh's vertices: a box too small for any sample still holds the surface at its
    vertex (the sample nearest it); a box that holds no vertex is refused with one clear line."""
    V, F, instance = laptop
    corner = V[np.argmin(V.sum(1))]
    tiny = {"lower": tuple(corner - 1e-5), "upper": tuple(corner + 1e-5)}
    held = predict_motion(instance, None, _fast(duration=0.1, pins=[tiny]), articulation=None)
    assert held.summary["pinned_points"] >= 1
    empty = {"lower": (5.0, 5.0, 5.0), "upper": (5.1, 5.1, 5.1)}
    with pytest.raises(ActionError, match="pin box 0 .* holds no vertex"):
        predict_motion(instance, None, _fast(duration=0.1, pins=[empty]))


def _cloth(size: float = 0.5, count: int = 16):
    """A flat square cloth, size metres, count x count vertices, 0.5 m up."""
    xs = np.linspace(-size / 2, size / 2, count)
    X, Y = np.meshgrid(xs, xs)
    V = np.stack([X.ravel(), Y.ravel(), np.full(count * count, 0.5)], 1)
    a = (np.arange(count - 1)[:, None] * count + np.arange(count - 1)[None]).ravel()
    F = np.concatenate([np.stack([a, a + 1, a + count], 1), np.stack([a + 1, a + count + 1, a + count], 1)])
    return V, F


def test_a_free_cloth_falls_at_g_and_one_pinned_by_an_edge_drapes():
    """An object without joints is carried by a free rigid body: a 0.5 m cloth under gravity falls with
    its centre of mass within 1% of 1/2 g t^2 (the shape-matching elastic energy holds nothing back);
    pinned along one edge by a thin box, it swings down about that edge (its lowest point falls at
    least 30% of its size in 1 s) without blowing up, the pinned edge staying near its place."""
    V, F = _cloth()
    instance = encode_mesh(load_default_model()[0], V, F)
    cloth = Articulation(np.zeros(len(V), np.int64), [], "cloth")
    settings = _fast(duration=0.5, fps=20.0, gravity=(0.0, 0.0, -9.81), method="dp45")
    fall = predict_motion(instance, None, settings, articulation=cloth)
    expected = 0.5 * 9.81 * fall.times[1:] ** 2
    drop = fall.vertices[0, :, 2].mean() - fall.vertices[1:, :, 2].mean(1)
    assert fall.summary["free_body"] and np.abs(drop / expected - 1).max() < 0.01
    assert fall.summary["energy_drift"] < 1e-3 and fall.summary["chart"] == "latent"
    np.testing.assert_allclose(fall.q[1:, -4], -expected, rtol=0.01)  # the carrier's z slide, the last 6 of q
    edge = V[:, 1] > 0.24
    box = {"lower": tuple(V[edge].min(0) - 1e-3), "upper": tuple(V[edge].max(0) + 1e-3)}
    drape = predict_motion(instance, None, settings_from(duration=1.0, fps=20.0, gravity=(0.0, 0.0, -9.81),
                                                         pins=[box]), articulation=cloth)
    assert drape.summary["pinned_points"] >= 4 and drape.summary["energy_drift"] < 0.01
    assert (V[:, 2].min() - drape.vertices[:, :, 2].min(1)).max() >= 0.3 * 0.5
    assert np.abs(drape.vertices[:, edge] - V[edge]).max() < 0.1 and np.abs(drape.vertices).max() < 1.0


def test_a_held_base_keeps_its_place_in_the_output_frames(laptop):
    """The learned space moves the whole object with its parts; with the base held, the map and the
    frames are in the base's frame (no free body carries it): the base vertices keep their rest pose
    up to the base's own deformation (without the alignment: a 3.6 mm drift in this run), while
    gravity moves this lid by centimetres in 0.3 s."""
    V, _, instance = laptop
    bottom = V[:, 2] < V[:, 2].min() + 0.02
    held = predict_motion(instance, None, _fast(duration=0.3, method="dp45", stiffness=0.0),
                          pinned_vertices=bottom)
    rotation, translation = rigid_alignment(torch.as_tensor(held.vertices[:, bottom], dtype=torch.float64),
                                            torch.as_tensor(V[bottom], dtype=torch.float64))
    angle = torch.arccos(((rotation.diagonal(dim1=1, dim2=2).sum(-1) - 1) / 2).clamp(-1, 1))
    assert float(translation.norm(dim=-1).max()) < 1e-3 and float(angle.max()) < np.radians(0.5)
    lid = np.linalg.norm(held.vertices[:, ~bottom] - held.vertices[:1, ~bottom], axis=-1).max()
    assert lid > 0.05  # while the lid falls


def test_contact_velocity_sets_the_initial_motion(laptop):
    _, _, instance = laptop
    velocity = np.array([[0.0, 0.05, 0.0]])
    conditions = ContactConditions([LID_TOP], velocity)
    prediction = predict_motion(instance, conditions, _fast(duration=1 / 30, gravity=(0.0, 0.0, 0.0)))
    summary = prediction.summary
    assert summary["contact_velocity_residual"] < 0.05
    assert summary["contact_velocity_fit_residual"] < 0.05
    assert summary["contact_surface_distance_m"][0] < 0.01
    achieved = np.array(summary["contact_velocity_achieved_m_s"])
    assert achieved.shape == (1, 3) and np.linalg.norm(achieved - velocity) < 0.05 * 0.05
    assert prediction.energy[0, 0] > 0  # it starts moving


def test_push_and_drag_do_work_and_keep_the_balance(laptop, tmp_path):
    _, _, instance = laptop
    push = PushSpec(LID_TOP, (0.0, 0.5, 0.0), 0.0, 0.05)
    prediction = predict_motion(instance, None, _fast(gravity=(0.0, 0.0, 0.0), pushes=(push,)))
    assert prediction.work[-1] > 0  # the push does positive work
    assert prediction.summary["energy_drift"] < 0.05  # T + V - W stays constant
    assert prediction.summary["push_surface_distance_m"][0] < 0.01
    path = write_drag_path_csv(tmp_path / "path.csv", [0.1], np.array([[[0.0, 0.22, 0.25]]]))
    times, positions = read_drag_path(path)
    assert times.tolist() == [0.1] and positions.shape == (1, 1, 3)
    conditions = ContactConditions([LID_TOP], [[0.0, 0.0, 0.0]], times, positions)
    dragged = predict_motion(instance, conditions, _fast(gravity=(0.0, 0.0, 0.0)))
    assert dragged.work[-1] > 0


def test_far_push_point_is_rejected(laptop):
    _, _, instance = laptop
    with pytest.raises(ActionError, match="push point 0 .* m from the mesh surface"):
        predict_motion(instance, None, _fast(pushes=(PushSpec((0.0, 0.0, 3.0), (1.0, 0.0, 0.0), 0.0, 0.1),)))


def test_polynomial_surrogate_tracks_the_decoder(laptop):
    """A push on the lid, 0.3 s, no gravity: the solver on the fitted polynomial and on the decoder
    itself give the same motion to within 10% of the largest displacement (measured: 2.7 mm of 51 mm),
    and the surrogate reports its own accuracy along the way."""
    _, _, instance = laptop
    conditions = ContactConditions([LID_TOP], [[0.0, -0.3, 0.0]])
    common = dict(duration=0.3, method="dopri5", gravity=(0.0, 0.0, 0.0))
    polynomial = predict_motion(instance, conditions, _fast(**common))
    decoder = predict_motion(instance, conditions, _fast(dynamics_map="decoder", **common))
    report = polynomial.summary["surrogate"]
    assert polynomial.summary["derivatives"] == "analytic" and decoder.summary["surrogate"] is None
    moved = np.linalg.norm(decoder.points - decoder.points[0], axis=-1).max()
    assert report["degree"] == default_settings().surrogate_degree and report["samples"] > 70
    assert report["frame_error"]["max_m"] < 0.05 * moved
    difference = np.linalg.norm(polynomial.points - decoder.points, axis=-1).max()
    assert moved > 0.01 and difference < 0.1 * moved, (moved, difference)
    assert polynomial.summary["contact_velocity_residual"] < 0.05


def test_driven_output_follows_the_exact_decode(laptop):
    _, _, instance = laptop
    q = torch.zeros(2, instance.k_q)
    q[1, :4] = torch.tensor([1.0, -1.0, 0.5, 2.0])
    exact, mode = decode_frames(instance, instance.latent(q), output_points=10_000)
    assert mode == "exact"
    driven, mode = decode_frames(instance, instance.latent(q), output_points=256)
    assert mode == "driven" and driven.shape == exact.shape and driven.dtype == np.float32
    error = np.linalg.norm(driven - exact, axis=-1)
    assert error.mean() < 0.003 and error.max() < 0.02  # metres, on a 0.54 m diagonal


def test_hermite_frames_between_solver_states():
    nodes = torch.linspace(0.0, 1.0, 11, dtype=torch.float64)
    q, qdot = torch.sin(3 * nodes)[:, None], 3 * torch.cos(3 * nodes)[:, None]
    frames = torch.linspace(0.0, 1.0, 31, dtype=torch.float64)
    q_f, v_f = interpolate_states(nodes, q, qdot, frames)
    assert torch.allclose(q_f[:, 0], torch.sin(3 * frames), atol=2e-4)
    assert torch.allclose(v_f[:, 0], 3 * torch.cos(3 * frames), atol=2e-2)
    assert torch.equal(q_f[::3], q)  # frames on nodes are the solver's states


def test_settings_come_from_one_yaml():
    settings = default_settings()
    assert settings.num_frames == round(settings.duration * settings.fps) + 1
    assert settings_from(stiffness=10.0).stiffness == 10.0
    with pytest.raises(ValueError, match="unknown simulation settings"):
        settings_from(stifness=10.0)
    with pytest.raises(ValueError, match="duration must be a positive number"):
        settings_from(duration=-1.0)


def test_glb_writer_structure(tmp_path):
    import trimesh

    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
    F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    T = 5
    frames = np.stack([V + [0.0, 0.0, 0.1 * t] for t in range(T)]).astype(np.float32)
    times = np.arange(T) / 10.0
    path = write_animated_glb(tmp_path / "a.glb", frames, F, times)
    raw = path.read_bytes()
    magic, version, length = np.frombuffer(raw[:12], dtype="<u4")
    assert (magic, version, length) == (GLB_MAGIC, 2, len(raw))
    assert np.frombuffer(raw[16:20], dtype="<u4")[0] == CHUNK_JSON
    gltf, blob = read_glb(path)
    json_length = int(np.frombuffer(raw[12:16], dtype="<u4")[0])
    assert np.frombuffer(raw[24 + json_length:28 + json_length], dtype="<u4")[0] == CHUNK_BIN
    primitive = gltf["meshes"][0]["primitives"][0]
    assert len(primitive["targets"]) == T - 1 and len(gltf["meshes"][0]["weights"]) == T - 1
    sampler = gltf["animations"][0]["samplers"][0]
    assert gltf["accessors"][sampler["input"]]["count"] == T
    assert gltf["accessors"][sampler["output"]]["count"] == T * (T - 1)
    assert gltf["animations"][0]["channels"][0]["target"] == {"node": 0, "path": "weights"}
    np.testing.assert_allclose(accessor_array(gltf, blob, sampler["input"]), times, atol=1e-7)
    weights = accessor_array(gltf, blob, sampler["output"]).reshape(T, T - 1)
    np.testing.assert_array_equal(weights, np.eye(T, T - 1, k=-1))
    for t, target in enumerate(primitive["targets"], start=1):
        np.testing.assert_allclose(accessor_array(gltf, blob, target["POSITION"]), frames[t] - frames[0], atol=1e-6)
    for view in gltf["bufferViews"]:
        assert view["byteOffset"] % 4 == 0 and view["byteOffset"] + view["byteLength"] <= len(blob)
    mesh = trimesh.load(path, force="mesh", process=False)
    np.testing.assert_allclose(mesh.vertices, frames[0], atol=1e-6)
    np.testing.assert_array_equal(mesh.faces, F)


def test_energy_plot(tmp_path):
    t = np.linspace(0, 1, 11)
    energy = np.stack([np.sin(t) ** 2, np.cos(t) ** 2, np.ones_like(t)], axis=1)
    out = plot_energy(t, energy, tmp_path / "e.png", title="test", work=np.zeros_like(t))
    assert out.stat().st_size > 1000


def test_cli_writes_trajectory_and_glb(laptop, tmp_path, capsys):
    V, F, instance = laptop
    out, glb = tmp_path / "traj.npz", tmp_path / "traj.glb"
    code = neurok_main(["simulate", str(EXAMPLE), "--contact", *map(str, LID_TOP), "--velocity", "0", "0.03", "0",
                        "--duration", "0.1", "--fps", "20", "--points", "32", "--out", str(out), "--glb", str(glb),
                        "--json", "--device", "cpu", "--articulation", "none"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["frames"] == 3 and summary["contact_velocity_residual"] < 0.05
    assert summary["energy_drift"] >= 0 and set(summary["seconds"]) >= {"encode", "simulate", "decode"}
    with np.load(out) as data:
        assert set(data.files) == {"vertices", "faces", "times", "q", "energy"}
        assert data["vertices"].shape == (3, len(V), 3) and data["vertices"].dtype == np.float32
        np.testing.assert_array_equal(data["faces"], F)
        np.testing.assert_allclose(data["times"], [0.0, 0.05, 0.1])
        # the latent chart's coordinates, then the free body's six
        assert summary["chart"] == "latent" and summary["free_body"]
        assert data["q"].shape == (3, summary["k_q"] + 6)
        assert data["energy"].shape == (3, 3)
        # the input vertex order: frame 0 is the input pose as the model reproduces it
        np.testing.assert_allclose(data["vertices"][0], instance.decode(), atol=1e-5)
        assert np.linalg.norm(data["vertices"][0] - V, axis=1).max() < 0.02
        frames = data["vertices"]
    import trimesh

    mesh = trimesh.load(glb, force="mesh", process=False)
    np.testing.assert_allclose(mesh.vertices, frames[0], atol=1e-6)
    np.testing.assert_array_equal(mesh.faces, F)
    gltf, _ = read_glb(glb)
    assert gltf["accessors"][gltf["meshes"][0]["primitives"][0]["attributes"]["POSITION"]]["count"] == len(V)


def test_cli_simulates_the_readout_in_joint_coordinates(tmp_path, capsys):
    """The default path: the readout's hinge, the base anchored, the lid turned rigidly at v / r."""
    readout, out = tmp_path / "readout.json", tmp_path / "traj.npz"
    assert neurok_main(["articulate", str(EXAMPLE), "--out", str(readout), "--device", "cpu"]) == 0
    articulation = Articulation.load(readout, 482)
    hinge = articulation.joints[0]
    lid = articulation.labels == hinge.child
    V = load_mesh(EXAMPLE)[0]
    top = V[lid][np.argmax(V[lid][:, 2])]
    arm = top - hinge.origin - ((top - hinge.origin) @ hinge.axis) * hinge.axis
    way = 1.0 if hinge.upper >= -hinge.lower else -1.0  # towards the wider of the two limits
    tangent = way * np.cross(hinge.axis, arm) / np.linalg.norm(arm)
    code = neurok_main(["simulate", str(EXAMPLE), "--articulation", str(readout), "--contact", *map(str, top),
                        "--velocity", *map(str, 0.3 * tangent), "--gravity", "0", "0", "0", "--duration", "0.2",
                        "--fps", "20", "--out", str(out), "--json", "--device", "cpu"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["chart"] == "joints" and summary["contact_velocity_residual"] < 1e-6
    with np.load(out) as data:
        rate = np.diff(data["q"][:, 0]) / np.diff(data["times"])
        np.testing.assert_allclose(rate, way * 0.3 / np.linalg.norm(arm), rtol=1e-4)
        assert np.abs(data["vertices"][:, ~lid] - V[~lid]).max() < 1e-6
    bad = tmp_path / "other.json"
    bad.write_text(readout.read_text().replace('"labels": [0, ', '"labels": ['))
    assert neurok_main(["simulate", str(EXAMPLE), "--articulation", str(bad), "--out", str(out)]) == 2
    assert "labels 481 vertices, the mesh has 482" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--contact", "0", "0", "5"], "contact 0 at (0, 0, 5) is"),
    (["--contact", *map(str, LID_TOP), "--velocity", "nan", "0", "0"], "contact velocities contain NaN or inf"),
    (["--contact", "0", "0", "0", "--velocity", "1", "0", "0", "--velocity", "1", "0", "0"],
     "one velocity per contact"),
    (["--pin-box", "0", "0", "0", "-1", "1", "1"], "a pin box needs X0 <= X1"),
])
def test_cli_rejects_bad_actions_with_one_line(tmp_path, capsys, argv, message):
    code = neurok_main(["simulate", str(EXAMPLE), *argv, "--duration", "0.1", "--out", str(tmp_path / "t.npz")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and err.startswith("neurok simulate: error:")
    assert not (tmp_path / "t.npz").exists()
