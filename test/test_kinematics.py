"""The instance API (encode / decode), the active subspace and inverse kinematics, with the shipped
model on the bundled example mesh and with an analytic toy kinematic space."""
import json

import numpy as np
import pytest
import torch

from neurok_ros.benchmarks.example_meshes import lid_turned
from neurok_ros.cli import main as neurok_main
from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.geometry.visibility import visible_samples
from neurok_ros.kinematics.active_subspace import Subspace, active_subspace, gaussian_draws
from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT, EncodingConfig, encode_mesh, load_default_model
from neurok_ros.kinematics.inverse_kinematics import IKConfig, adam_on_rows, fit_pose, span_with
from neurok_ros.kinematics.objectives import chamfer_l2, nearest_indices
from neurok_ros.kinematics.pose_space import projected_prior_draws
from neurok_ros.kinematics.scan_fit import drop_support, surface_distances

EXAMPLE = DEFAULT_CHECKPOINT.parent / "example_laptop.ply"
pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def model():
    return load_default_model()[0]


@pytest.fixture(scope="module")
def laptop(model):
    V, F = load_mesh(EXAMPLE)
    return V, F, encode_mesh(model, V, F)


def test_decode_at_q0_reproduces_the_input_pose(model, laptop):
    V, F, instance = laptop
    decoded = instance.decode()
    assert decoded.shape == V.shape and decoded.dtype == np.float64
    diagonal = np.linalg.norm(V.max(0) - V.min(0))
    assert np.linalg.norm(decoded - V, axis=1).max() < 1e-5 * diagonal  # rest-anchored: exact
    raw = encode_mesh(model, V, F, EncodingConfig(anchor_rest=False))
    error = np.linalg.norm(raw.decode() - V, axis=1) / diagonal  # the decoder's own reproduction
    assert 1e-4 < error.mean() < 0.01 and error.max() < 0.03  # fractions of the bounding-box diagonal
    # the same motion either way: anchoring only removes the rest-pose error
    q = torch.zeros(instance.k_q)
    q[0] = 2.0
    motion = instance.decode(q) - instance.decode()
    raw_motion = raw.decode(q) - raw.decode()
    assert np.linalg.norm(motion - raw_motion, axis=1).max() < 0.1 * np.linalg.norm(raw_motion, axis=1).max()
    assert 1 <= instance.k_q <= 16 and instance.subspace.basis.shape == (instance.k, instance.k_q)
    basis = instance.subspace.basis.double()
    torch.testing.assert_close(basis.T @ basis, torch.eye(instance.k_q, dtype=torch.float64), atol=1e-5, rtol=0)


def test_decode_answers_in_the_input_frame_units_and_order(model, laptop):
    V, F, instance = laptop
    shift = np.array([5.0, -3.0, 2.0])
    in_millimetres = encode_mesh(model, V * 1000.0 + shift, F)
    q = torch.linspace(-1.0, 1.0, instance.k_q)
    expected = instance.decode(q) * 1000.0 + shift
    np.testing.assert_allclose(in_millimetres.decode(q), expected, atol=1e-6 * 1000.0)
    order = np.random.default_rng(0).permutation(len(V))  # renumber the vertices
    inverse = np.argsort(order)
    permuted = encode_mesh(model, V[order], inverse[F])
    np.testing.assert_allclose(permuted.decode(), instance.decode()[order], atol=0.02)
    batch = instance.decode(torch.stack([q, -q]))
    assert batch.shape == (2, *V.shape)
    np.testing.assert_allclose(batch[0], instance.decode(q), atol=1e-5)  # float32 batching


def test_active_subspace_finds_the_directions_that_move_the_shape():
    generator = torch.Generator().manual_seed(3)
    W = torch.randn(2, 12, generator=generator)  # the shape changes only in the row space of W

    def deformation_norm(z):
        return (z @ W.T).norm(dim=1)

    subspace = active_subspace(deformation_norm, gaussian_draws(torch.zeros(12), 200), explained_variance=0.99)
    assert subspace.num_coords == 2 and subspace.explained > 0.999
    projector = subspace.basis @ subspace.basis.T
    torch.testing.assert_close(projector @ W.T, W.T, atol=1e-4, rtol=0)


class HingedLid:
    """An analytic kinematic space with the instance interface: a plate (y in [-0.6, 0], z = 0) and a
    lid (y = 0, z in [0.01, 0.61]) hinged on the x axis, two pieces of one mesh; z = (lid angle in
    radians, lid slide along the hinge). No learned parts; its frame is the normalised one."""

    k = k_q = 2
    device = torch.device("cpu")
    motion_offsets = None  # no posterior bank
    transform = NormalisingTransform(centre=np.zeros(3), scale=1.0)
    vertices = np.array([[0, -0.6, 0], [1, -0.6, 0], [1, 0, 0], [0, 0, 0],           # plate
                         [0, 0, 0.01], [1, 0, 0.01], [1, 0, 0.61], [0, 0, 0.61]], dtype=np.float64)  # lid
    faces = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]], dtype=np.int64)

    def __init__(self):
        self.prior_mean = torch.zeros(2)
        self.rest_latent = torch.zeros(2)
        self.subspace = Subspace(torch.eye(2), torch.ones(2), 1.0)

    def latent(self, q):
        return self.rest_latent + q @ self.subspace.basis.T

    def coordinates(self, z):
        return (z - self.rest_latent) @ self.subspace.basis

    def prior_draws(self, count, seed):
        return projected_prior_draws(self, count, seed)

    def surface_samples(self, count, seed=0):
        samples = sample_surface(self.vertices, self.faces, count, np.random.default_rng(seed))
        return samples, torch.as_tensor(samples.points, dtype=torch.float32)

    def query_cache(self, points):
        return points

    def positions(self, z, points):
        """z (B, k), points (N, 3) at rest -> (B, N, 3): what the objective decodes."""
        return self.shape(z, points)

    def shape(self, z, points):
        """z (B, k), points (N, 3) at rest -> (B, N, 3)."""
        angle, slide = z[:, None, 0:1], z[:, None, 1:2]  # (B, 1, 1)
        x, h = points[None, :, 0:1], points[None, :, 2:3]
        turned = torch.cat([x + slide, -h * torch.sin(angle), h * torch.cos(angle)], dim=-1)
        on_lid = points[None, :, 2:3] > 0.005  # lid points start in the y = 0 plane, z >= 0.01
        return torch.where(on_lid, turned, points[None].expand(z.shape[0], -1, -1))

    def decode(self, q=None, z=None):
        """The mesh vertices (8, 3) float64 at latent z (k,) (through self.shape, not self.positions,
        which a test may record as the objective's decodes)."""
        z = torch.as_tensor(z, dtype=torch.float32).reshape(1, -1)
        return self.shape(z, torch.as_tensor(self.vertices, dtype=torch.float32))[0].double().numpy()


def test_ik_recovers_a_pose_in_an_analytic_toy_space():
    """The lid's angle is pinned; its slide along the hinge shows only at the lid's two edges, where
    600 samples leave about 0.01-0.02 of it to sampling (any seed, fixed or fresh sample sets)."""
    toy = HingedLid()
    truth = torch.tensor([[0.9, 0.12]])
    _, observed_samples = toy.surface_samples(1500, seed=7)  # other samples than the fit's: no correspondence
    observed = toy.positions(truth, observed_samples)[0]
    result = fit_pose(toy, observed, IKConfig(points=600, starts=4, q_steps=120, z_steps=30, q_rate=0.05,
                                              z_rate=0.03, rest_check=False))  # the toy has no mesh
    assert abs(float(result.z[0]) - 0.9) < 0.03 and abs(float(result.z[1]) - 0.12) < 0.03
    assert result.loss < 1e-3 and result.start_losses.shape == (4,)


class BendingLid(HingedLid):
    """The hinged lid with a third coordinate that bends it: z = (angle, slide, bend); the lid's points
    move along its normal by bend * h^2 (h: height above the hinge), so bend != 0 is not rigid."""

    k = k_q = 3

    def __init__(self):
        super().__init__()
        self.prior_mean = torch.zeros(3)
        self.rest_latent = torch.zeros(3)
        self.subspace = Subspace(torch.eye(3), torch.ones(3), 1.0)

    def shape(self, z, points):
        angle, bend = z[:, None, 0:1], z[:, None, 2:3]
        h = points[None, :, 2:3]
        normal = torch.cat([torch.zeros_like(angle), torch.cos(angle), torch.sin(angle)], dim=-1)  # (B, 1, 3)
        on_lid = points[None, :, 2:3] > 0.005
        return super().shape(z[:, :2], points) + torch.where(on_lid, bend * h * h * normal, 0.0)


def test_rigid_pieces_keep_a_bending_lid_rigid():
    """The observation shows the lid turned and bent, which no rigid lid matches: with rigid pieces
    (the default) the rigidity term holds the fit's bend back and its vertices move each piece
    rigidly (the lid's best rigid motion, at about the observed angle); without, the fit bends the
    lid with the observation and its vertices are the decode itself. Piece registration is off here:
    on this toy it would slide the flat plate a little in its own plane towards the bent lid."""
    from dataclasses import replace

    from neurok_ros.geometry.rigid_pieces import RigidPieces

    toy = BendingLid()
    truth = torch.tensor([[0.9, 0.0, 0.4]])
    _, samples = toy.surface_samples(1500, seed=7)
    observed = toy.positions(truth, samples)[0]
    config = IKConfig(points=600, starts=4, q_steps=120, z_steps=30, q_rate=0.05, z_rate=0.03, rest_check=False,
                      rigidity_weight=10.0, piece_steps=0)
    free = fit_pose(toy, observed, replace(config, rigid_pieces=False))
    held = fit_pose(toy, observed, config)
    assert abs(float(free.z[2]) - 0.4) < 0.05  # the free fit follows the bend
    assert abs(float(held.z[2])) < 0.5 * abs(float(free.z[2]))
    np.testing.assert_allclose(free.vertices, toy.decode(z=free.z), atol=1e-6)
    lid = toy.vertices[:, 2] > 0.005
    rest_edges = np.linalg.norm(toy.vertices[lid][:, None] - toy.vertices[lid][None], axis=2)
    edges = np.linalg.norm(held.vertices[lid][:, None] - held.vertices[lid][None], axis=2)
    np.testing.assert_allclose(edges, rest_edges, atol=1e-6)  # the lid moved rigidly
    np.testing.assert_allclose(held.vertices[~lid], toy.vertices[~lid], atol=1e-6)  # the plate stayed
    pieces = RigidPieces.of_mesh(toy.vertices, toy.faces)
    np.testing.assert_allclose(pieces.project(toy.vertices, held.vertices), held.vertices, atol=1e-6)

    def lid_angle(vertices):  # of the lid's side edge, from the plate
        side = vertices[7] - vertices[4]
        return float(np.arctan2(-side[1], side[2]))

    # the bend tips the lid's far edge back: its best rigid motion stands at about 0.75 rad, not 0.9
    best_rigid = lid_angle(pieces.project(toy.vertices, toy.decode(z=truth[0])))
    assert 0.6 < best_rigid < 0.85 and abs(lid_angle(held.vertices) - best_rigid) < 0.05


class ShortLid(HingedLid):
    """The hinged lid of a model that falls short: coordinate z[0] turns it by 0.6 tanh(z[0]) radians,
    so no latent reaches an angle above 0.6."""

    def shape(self, z, points):
        return super().shape(torch.cat([0.6 * torch.tanh(z[:, :1]), z[:, 1:]], dim=1), points)


def test_piece_registration_brings_the_lid_the_model_cannot_reach_onto_the_observation():
    """The observed lid stands at 0.9 rad; the toy model reaches 0.6 at most. The fit alone stops there;
    with piece registration (IKConfig.piece_steps) the lid, a group of its own, turns onto the
    observation while the plate stays, and both keep their rest shapes. Registration is on by default
    (piece_steps 20); piece_steps=0 is the fit alone."""
    from dataclasses import replace

    toy = ShortLid()
    _, samples = toy.surface_samples(1500, seed=7)
    observed = HingedLid().positions(torch.tensor([[0.9, 0.0]]), samples)[0]
    config = IKConfig(points=600, starts=4, q_steps=120, z_steps=30, q_rate=0.05, z_rate=0.03, rest_check=False)

    def lid_angle(vertices):
        side = vertices[7] - vertices[4]
        return float(np.arctan2(-side[1], side[2]))

    assert config.piece_steps == 20
    alone = fit_pose(toy, observed, replace(config, piece_steps=0))
    registered = fit_pose(toy, observed, config)
    assert lid_angle(alone.vertices) < 0.61
    assert abs(lid_angle(registered.vertices) - 0.9) < 0.05, lid_angle(registered.vertices)
    np.testing.assert_allclose(registered.vertices[:4], toy.vertices[:4], atol=0.01)
    lid = registered.vertices[4:]
    np.testing.assert_allclose(np.linalg.norm(lid[:, None] - lid[None], axis=2),
                               np.linalg.norm(toy.vertices[4:, None] - toy.vertices[None, 4:], axis=2), atol=1e-9)


def test_ik_recovers_a_pose_from_part_of_the_surface():
    """A partial view (the lid's lower half; the plate and the lid's top hidden) and the one-sided
    objective still pin the lid's angle and slide."""
    toy = HingedLid()
    truth = torch.tensor([[0.9, 0.12]])
    _, samples = toy.surface_samples(1500, seed=7)
    seen = toy.positions(truth, samples)[0][(samples[:, 2] > 0) & (samples[:, 2] < 0.3)]
    result = fit_pose(toy, seen, IKConfig(points=600, starts=4, q_steps=120, z_steps=30, q_rate=0.05,
                                          z_rate=0.03, rest_check=False, partial=True))
    assert abs(float(result.z[0]) - 0.9) < 0.03 and abs(float(result.z[1]) - 0.12) < 0.03
    assert result.loss < 2e-3


def test_ik_objective_decodes_a_fresh_sample_set_at_each_evaluation():
    """The objective cycles through config.sample_sets seeded sets of source samples, the first being
    the one fixed set of sample_sets=1, so the fit cannot fit one set's sampling pattern."""
    class RecordingLid(HingedLid):
        def __init__(self):
            super().__init__()
            self.seen = []

        def positions(self, z, points):
            self.seen.append(points)
            return super().positions(z, points)

    truth = torch.tensor([[0.9, 0.12]])
    _, samples = HingedLid().surface_samples(1500, seed=7)
    observed = HingedLid().positions(truth, samples)[0]
    counts = {}
    for sets in (1, 3):
        toy = RecordingLid()
        fit_pose(toy, observed, IKConfig(points=200, starts=2, q_steps=10, z_steps=5, rest_check=False,
                                         sample_sets=sets))
        distinct = []
        for points in toy.seen:
            if not any(points is d for d in distinct):
                distinct.append(points)
        counts[sets] = len(distinct)
        torch.testing.assert_close(toy.seen[0], toy.surface_samples(200, seed=0)[1])
        assert all(toy.seen[i] is distinct[i % sets] for i in range(len(toy.seen)))
        assert all(not torch.equal(a, b) for i, a in enumerate(distinct) for b in distinct[i + 1:])
    assert counts == {1: 1, 3: 3}
    with pytest.raises(ValueError, match="sample_sets"):
        IKConfig(sample_sets=0)


def test_span_with_keeps_the_basis_and_adds_only_the_missing_directions():
    generator = torch.Generator().manual_seed(3)
    basis = torch.linalg.qr(torch.randn(7, 2, generator=generator))[0]
    directions = torch.randn(3, 7, generator=generator)
    directions[2] = 2.0 * directions[0] - basis[:, 1]  # dependent on the rest: adds nothing
    extended = span_with(basis, directions)
    assert extended.shape == (7, 4)
    torch.testing.assert_close(extended[:, :2], basis)
    torch.testing.assert_close(extended.T @ extended, torch.eye(4), atol=1e-5, rtol=0)
    residual = directions.T - extended @ (extended.T @ directions.T)  # every direction is reached
    assert float(residual.abs().max()) < 1e-5
    assert span_with(torch.eye(7), directions).shape == (7, 7)  # the whole space already spans them


def test_chamfer_l2_matches_the_brute_force_definition():
    generator = torch.Generator().manual_seed(0)
    a, b = torch.rand(2, 50, 3, generator=generator), torch.rand(70, 3, generator=generator)
    d = ((a[:, :, None] - b[None, None]) ** 2).sum(-1)
    expected = 0.5 * (d.min(2).values.mean(1) + d.min(1).values.mean(1))
    torch.testing.assert_close(chamfer_l2(a, b), expected)


def test_nearest_indices_and_the_chamfer_gradient_match_the_distance_matrix():
    """The CPU k-d tree answers the brute-force nearest neighbours, and the rebuilt loss has the
    gradient of the brute-force Chamfer-L2 (no ties among random points)."""
    generator = torch.Generator().manual_seed(1)
    a, b = torch.rand(3, 200, 3, generator=generator), torch.rand(300, 3, generator=generator)
    d = ((a[:, :, None] - b[None, None]) ** 2).sum(-1)
    to_target, to_points = nearest_indices(a, b)
    assert torch.equal(to_target, d.argmin(2)) and torch.equal(to_points, d.argmin(1))
    fast, brute = a.clone().requires_grad_(True), a.clone().requires_grad_(True)
    chamfer_l2(fast, b).sum().backward()
    d = ((brute[:, :, None] - b[None, None]) ** 2).sum(-1)
    (0.5 * (d.min(2).values.mean(1) + d.min(1).values.mean(1))).sum().backward()
    torch.testing.assert_close(fast.grad, brute.grad)


def test_one_sided_chamfer_is_the_observed_points_distance_to_the_decoded_ones():
    generator = torch.Generator().manual_seed(4)
    a, b = torch.rand(2, 60, 3, generator=generator), torch.rand(40, 3, generator=generator)
    d = ((a[:, :, None] - b[None, None]) ** 2).sum(-1)
    torch.testing.assert_close(chamfer_l2(a, b, one_sided=True), d.min(1).values.mean(1))
    extra = torch.cat([a, a[:, :1] + 5.0], dim=1)  # a decoded point far from every observed one
    torch.testing.assert_close(chamfer_l2(extra, b, one_sided=True), chamfer_l2(a, b, one_sided=True))
    assert bool((chamfer_l2(extra, b) > chamfer_l2(a, b)).all())


def test_trimmed_chamfer_leaves_out_the_observed_outliers():
    """With trim, the observed points farthest from the decoded ones (a gripper in the view) leave the
    observed-to-decoded term: 6 far outliers among 60 points, trim 0.1, give the clean value."""
    generator = torch.Generator().manual_seed(5)
    a, b = torch.rand(2, 50, 3, generator=generator), torch.rand(54, 3, generator=generator)
    cluttered = torch.cat([b, b[:6] + 3.0])
    d = ((a[:, :, None] - b[None, None]) ** 2).sum(-1)
    clean = d.min(1).values  # (2, 54): each observed point's squared distance to its nearest decoded one
    kept = torch.sort(clean, dim=1).values[:, :54 - int(0.1 * 54)]
    torch.testing.assert_close(chamfer_l2(a, cluttered, one_sided=True, trim=0.1), clean.mean(1))
    torch.testing.assert_close(chamfer_l2(a, b, one_sided=True, trim=0.1), kept.mean(1))
    assert bool((chamfer_l2(a, cluttered, one_sided=True) > 10 * clean.mean(1)).all())
    torch.testing.assert_close(chamfer_l2(a, cluttered, trim=0.1)  # the decoded-to-observed term keeps every point
                               - 0.5 * chamfer_l2(a, cluttered, one_sided=True, trim=0.1),
                               0.5 * ((a[:, :, None] - cluttered[None, None]) ** 2).sum(-1).min(2).values.mean(1))
    with pytest.raises(ValueError, match="trim"):
        IKConfig(trim=1.0)


def test_adam_on_rows_prunes_to_the_best_rows():
    """With prune (after, keep), the rows that go on take the very steps of the unpruned run, the
    dropped rows keep the best they had seen by then, and the objective sees only the kept rows."""
    generator = torch.Generator().manual_seed(3)
    start, centre = 2 * torch.randn(6, 5, generator=generator), torch.randn(5, generator=generator)
    batches = []

    def objective(x):
        batches.append(len(x))
        return (x - centre).square().sum(1) + torch.sin(3 * x).sum(1)

    full_value, full_loss = adam_on_rows(start, objective, steps=30, rate=0.05)
    early_value, early_loss = adam_on_rows(start, objective, steps=4, rate=0.05)  # evaluations 0-4
    batches.clear()
    value, loss = adam_on_rows(start, objective, steps=30, rate=0.05, prune=(5, 2))
    assert batches == [6] * 5 + [2] * 26
    order = torch.argsort(early_loss)
    kept, dropped = order[:2], order[2:]
    torch.testing.assert_close(value[kept], full_value[kept])
    torch.testing.assert_close(loss[kept], full_loss[kept])
    torch.testing.assert_close(value[dropped], early_value[dropped])
    torch.testing.assert_close(loss[dropped], early_loss[dropped])
    assert float(loss.min()) == float(full_loss[kept].min())
    assert not torch.equal(value[dropped], full_value[dropped])  # they would have gone on
    batches.clear()
    adam_on_rows(start, objective, steps=30, rate=0.05, prune=(5, 8))  # keep more than there are: no pruning
    assert batches == [6] * 31
    with pytest.raises(ValueError, match="q_keep"):
        IKConfig(q_keep=-1)


def test_adam_on_rows_takes_torch_adams_steps():
    """The written-out update equals torch.optim.Adam's on a non-quadratic objective, and the best
    row values seen are returned."""
    generator = torch.Generator().manual_seed(2)
    start, centre = torch.randn(4, 5, generator=generator), torch.randn(4, 5, generator=generator)

    def objective(x):
        return (x - centre).square().sum(1) + torch.sin(3 * x).sum(1)

    value, loss = adam_on_rows(start, objective, steps=30, rate=0.05)
    reference = start.clone().requires_grad_(True)
    optimiser = torch.optim.Adam([reference], lr=0.05)
    best, best_loss = start.clone(), objective(start)
    for _ in range(30):
        optimiser.zero_grad()
        objective(reference).sum().backward()
        optimiser.step()
        with torch.no_grad():
            current = objective(reference)
            better = current < best_loss
            best[better], best_loss = reference[better], torch.where(better, current, best_loss)
    torch.testing.assert_close(value, best, atol=1e-5, rtol=0)
    torch.testing.assert_close(loss, best_loss, atol=1e-5, rtol=0)
    assert float(loss.max()) < float(objective(start).min())  # it went somewhere


def test_ik_keeps_the_input_pose_when_the_observation_shows_it(laptop):
    """Observed samples of SOURCE itself: the rest check returns q = 0 (SOURCE exactly) rather than
    a fit to the sampling noise; a turned lid: the fit wins and is closer to it than SOURCE."""
    from neurok_ros.geometry.surface_sampling import sample_surface

    V, F, instance = laptop
    config = IKConfig(starts=2, q_steps=25, z_steps=15)
    for target, moved in ((V, False), (lid_turned(V, 0.3, F), True)):
        observed = instance.transform.apply(sample_surface(target, F, 2048, np.random.default_rng(5)).points)
        result = fit_pose(instance, torch.as_tensor(observed, dtype=torch.float32), config)
        assert result.kept_rest is not moved, result.surface_errors
        fitted = instance.decode(z=result.z)
        if moved:
            # this short fit leaves 0.56-0.81 of SOURCE's vertex error over sampling seeds 5-7
            assert np.abs(fitted - target).mean() < 0.9 * np.abs(V - target).mean()
            assert result.surface_errors["fit"] < 0.5 * result.surface_errors["rest"]
        else:
            assert np.abs(fitted - V).max() < 1e-5 and float(result.q.abs().max()) < 1e-5


def _frozen_subspace_and_turned_lid(V, F, instance):
    """(the instance with a subspace that cannot move the shape (A = 0), the lid turned by 0.3 rad
    (n, 3), 2048 samples of it in the normalised frame (2048, 3))."""
    from dataclasses import replace

    from neurok_ros.geometry.surface_sampling import sample_surface

    frozen = replace(instance, subspace_source=Subspace(torch.zeros(instance.k, 1), torch.ones(instance.k), 0.0))
    target = lid_turned(V, 0.3, F)
    samples = sample_surface(target, F, 2048, np.random.default_rng(5)).points
    return frozen, target, torch.as_tensor(instance.transform.apply(samples), dtype=torch.float32)


def test_ik_falls_back_to_the_whole_latent_space_when_the_subspace_cannot_reach_the_pose(laptop):
    """A subspace that cannot move the shape (A = 0): its fit ties SOURCE, so the rest check would
    keep q = 0; the fallback fits again with A = I and finds the turned lid."""
    from dataclasses import replace

    V, F, instance = laptop
    frozen, target, observed = _frozen_subspace_and_turned_lid(V, F, instance)
    # no z refinement (the first fit stays in A's span), no bank motions (they would reach the lid);
    # without them the whole-space fit needs the stronger pull towards mu to stay uncrumpled; no piece
    # registration (it would turn the laptop's lid piece onto the observation by itself)
    config = IKConfig(starts=2, q_steps=25, z_steps=0, bank_starts=False, prior_weight=1e-4, piece_steps=0)
    stuck = fit_pose(frozen, observed, replace(config, full_space_fallback=False))
    assert stuck.kept_rest and not stuck.full_space
    result = fit_pose(frozen, observed, config)
    assert result.full_space and not result.kept_rest
    assert result.surface_errors["fit"] < 0.5 * result.surface_errors["rest"]
    fitted = frozen.decode(z=result.z)
    assert np.abs(fitted - target).mean() < 0.8 * np.abs(V - target).mean()


def test_ik_reaches_a_pose_through_the_posterior_bank_motions(laptop):
    """The same frozen subspace (A = 0) with neither the z refinement nor the fallback: the bank's
    motions, as starts and as the q stage's directions, alone find the turned lid."""
    V, F, instance = laptop
    assert instance.motion_offsets is not None  # the shipped checkpoint carries a posterior bank
    frozen, target, observed = _frozen_subspace_and_turned_lid(V, F, instance)
    result = fit_pose(frozen, observed, IKConfig(starts=4, q_steps=25, z_steps=0, full_space_fallback=False))
    assert not result.kept_rest and not result.full_space
    assert result.surface_errors["fit"] < 0.5 * result.surface_errors["rest"]
    fitted = frozen.decode(z=result.z)
    assert np.abs(fitted - target).mean() < 0.8 * np.abs(V - target).mean()


def test_an_ensemble_of_fits_averages_members_that_each_fit_alone(model, laptop):
    """Fit 0 of an ensemble is the single fit (encode_mesh, fit_pose with the same seeds); the others
    differ by their samples and starts; the prediction is their vertex mean (its rigid pieces projected),
    closer to the turned lid than SOURCE is."""
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.geometry.rigid_pieces import RigidPieces
    from neurok_ros.kinematics.fit_ensemble import fit_ensemble

    V, F, instance = laptop
    target = lid_turned(V, 0.3, F)
    observed = sample_surface(target, F, 2048, np.random.default_rng(5)).points
    config = IKConfig(starts=2, q_steps=25, z_steps=15)
    single = fit_pose(instance, torch.as_tensor(instance.transform.apply(observed), dtype=torch.float32), config)
    ensemble = fit_ensemble(model, V, F, observed, 3, EncodingConfig(), config)
    assert ensemble.member_vertices.shape == (3, *V.shape) and len(ensemble.members) == 3
    np.testing.assert_allclose(ensemble.member_vertices[0], single.vertices, atol=1e-6)
    assert np.abs(ensemble.member_vertices[1] - ensemble.member_vertices[0]).max() > 1e-4
    # the example laptop is six pieces: each fit moves them rigidly, and so does their projected mean
    pieces = RigidPieces.of_mesh(V, F)
    for member in ensemble.member_vertices:
        np.testing.assert_allclose(pieces.project(V, member), member, atol=1e-6)
    mean = ensemble.member_vertices.mean(axis=0)
    np.testing.assert_allclose(ensemble.vertices, pieces.project(V, mean))
    assert np.abs(ensemble.vertices - mean).max() < 0.1 * np.abs(mean - V).max()
    rms = np.sqrt(np.square(ensemble.member_vertices - ensemble.vertices).sum(axis=2).mean(axis=0))
    np.testing.assert_allclose(ensemble.spread, rms)
    assert 0 <= ensemble.medoid < 3
    assert np.abs(ensemble.vertices - target).mean() < 0.9 * np.abs(V - target).mean()
    with pytest.raises(NeurokInputError, match="at least one fit"):
        fit_ensemble(model, V, F, observed, 0)


def test_cli_ik_and_sample(tmp_path, laptop, capsys):
    from neurok_ros.geometry.rigid_pieces import RigidPieces

    V, F, _ = laptop
    hinge_turn = lid_turned(V, 0.2, F)
    source, target = tmp_path / "source.ply", tmp_path / "target.ply"
    save_mesh(source, V, F)
    save_mesh(target, hinge_turn, F)
    assert neurok_main(["ik", str(source), str(target), "--json", "--samples", "20000", "--device", "cpu",
                        "--out", str(tmp_path / "fit.ply"), "--articulation", "none"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(summary) == {"chamfer_l1", "chamfer_l2", "iou", "k", "k_q", "fits", "spread", "rigid_pieces",
                            "joints", "kept", "seconds"}
    assert summary["joints"] is None and summary["kept"] == "learned"  # --articulation none: the learned fit alone
    assert summary["fits"] == 1 and summary["spread"] is None and summary["rigid_pieces"] == 6
    assert 0 <= summary["chamfer_l1"] < 0.2 and 0 <= summary["iou"] <= 1 and summary["k"] == 128
    fitted, fitted_faces = load_mesh(tmp_path / "fit.ply")
    assert fitted.shape == V.shape and np.array_equal(fitted_faces, F)
    pieces = RigidPieces.of_mesh(V, F)  # the laptop's six pieces each moved rigidly
    np.testing.assert_allclose(pieces.project(V, fitted), fitted, atol=1e-5 * np.ptp(V, axis=0).max())
    assert neurok_main(["ik", str(source), str(target), "--json", "--samples", "20000", "--device", "cpu",
                        "--no-rigid-pieces"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["rigid_pieces"] == 0
    camera = [str(c) for c in V.mean(axis=0) + [0.0, -2.0, 1.0]]  # in front of the laptop, above it
    assert neurok_main(["ik", str(source), str(target), "--json", "--samples", "20000", "--device", "cpu",
                        "--camera", *camera]) == 0
    partial = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert partial["chamfer_l1"] < 0.2 and partial["chamfer_l1"] != summary["chamfer_l1"]
    save_mesh(tmp_path / "other.ply", V[:100], F[np.all(F < 100, axis=1)])
    assert neurok_main(["ik", str(source), str(tmp_path / "other.ply")]) == 2
    assert "same vertices in the same order" in capsys.readouterr().err
    assert neurok_main(["ik", str(source), str(target), "--fits", "0"]) == 2
    assert "--fits must be a positive integer" in capsys.readouterr().err
    assert neurok_main(["ik", str(source), str(target), "--piece-steps", "-1"]) == 2
    assert "--piece-steps must be >= 0" in capsys.readouterr().err
    assert neurok_main(["ik", str(source), str(target), "--keep-starts", "-1"]) == 2
    assert "--keep-starts must be >= 0" in capsys.readouterr().err

    sheet, states = tmp_path / "sheet.png", tmp_path / "states.npz"
    assert neurok_main(["sample", str(source), "-n", "3", "--out", str(sheet), "--npz", str(states),
                        "--device", "cpu"]) == 0
    assert sheet.stat().st_size > 10_000
    drawn = np.load(states)["vertices"]
    assert drawn.shape == (3, *V.shape) and np.abs(drawn[0] - drawn[1]).max() > 1e-4
    assert neurok_main(["sample", str(source), "-n", "0", "--out", str(sheet)]) == 2


def test_cli_ik_through_a_saved_articulation_reports_the_joint_value(tmp_path, capsys):
    from box_objects import laptop as box_laptop

    from neurok_ros.articulation.articulation import Articulation
    from neurok_ros.kinematics.joint_pose_fit import part_transforms

    V, F, articulation, _ = box_laptop(60.0)
    R, t = part_transforms(articulation, torch.tensor([[-0.5]], dtype=torch.float64))
    target = np.einsum("nij,nj->ni", R[0, articulation.labels].numpy(), V) + t[0, articulation.labels].numpy()
    save_mesh(tmp_path / "source.ply", V, F)
    save_mesh(tmp_path / "target.ply", target, F)
    articulation.save(tmp_path / "laptop.json")
    assert neurok_main(["ik", str(tmp_path / "source.ply"), str(tmp_path / "target.ply"), "--json", "--samples",
                        "20000", "--device", "cpu", "--articulation", str(tmp_path / "laptop.json"),
                        "--articulation-out", str(tmp_path / "refined.json")]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["joints"]["hinge"] == pytest.approx(-0.5, abs=np.radians(1.0))
    refined = Articulation.load(tmp_path / "refined.json", len(V))  # the hinge's line, as the fit left it
    assert [j.name for j in refined.joints] == ["hinge"] and np.array_equal(refined.labels, articulation.labels)
    assert abs(refined.joints[0].axis @ articulation.joints[0].axis) > np.cos(np.radians(2.0))
    assert neurok_main(["ik", str(tmp_path / "source.ply"), str(tmp_path / "target.ply"), "--articulation", "none",
                        "--articulation-out", str(tmp_path / "x.json")]) == 2
    assert summary["kept"] in ("joints", "learned") and summary["iou"] > 0.9
    assert neurok_main(["ik", str(tmp_path / "source.ply"), str(tmp_path / "source.ply"), "--json", "--samples",
                        "20000", "--device", "cpu", "--articulation", str(tmp_path / "laptop.json")]) == 0
    still = json.loads(capsys.readouterr().out.strip().splitlines()[-1])  # a target at rest keeps the rest
    assert still["kept"] == "rest" and still["iou"] > 0.99 and abs(still["joints"]["hinge"]) < np.radians(1.0)
    assert neurok_main(["ik", str(tmp_path / "source.ply"), str(tmp_path / "target.ply"), "--articulation",
                        str(tmp_path / "missing.json")]) == 2
    assert "cannot read the articulation" in capsys.readouterr().err
    scan = sample_surface(target, F, 4000, np.random.default_rng(5)).points  # a scan of the posed laptop
    np.save(tmp_path / "scan.npy", scan)
    fitted = _fit_summary(capsys, tmp_path / "source.ply", tmp_path / "scan.npy", "--articulation",
                          tmp_path / "laptop.json")
    assert fitted["joints"]["hinge"] == pytest.approx(-0.5, abs=np.radians(2.0)) and fitted["moved"]
    assert fitted["residual_median"] < 0.5 * fitted["rest_residual_median"]


def _fit_summary(capsys, *argv) -> dict:
    assert neurok_main(["fit", *map(str, argv), "--json", "--device", "cpu"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_cli_fit_finds_the_pose_a_scan_shows(tmp_path, laptop, capsys):
    """A scan is bare points (no vertices, no correspondence), with the no-return NaNs of a depth
    camera; the fitted mesh moves the lid towards the scanned one. A scan of the mesh as it is keeps
    q = 0, and a scan from one side fits with --partial."""
    from neurok_ros.geometry.rigid_pieces import RigidPieces

    V, F, _ = laptop
    target = lid_turned(V, 0.3, F)
    mesh = tmp_path / "laptop.ply"
    save_mesh(mesh, V, F)
    scan = sample_surface(target, F, 3000, np.random.default_rng(4)).points
    scan[::500] = np.nan
    np.savetxt(tmp_path / "scan.xyz", scan)
    fitted_path = tmp_path / "fitted.ply"
    summary = _fit_summary(capsys, mesh, tmp_path / "scan.xyz", "--out", fitted_path)
    assert summary["moved"] and summary["dropped_points"] == 6 and summary["scan_points"] == 2994
    assert len(summary["q"]) == summary["k_q"] and summary["k"] == 128
    assert summary["residual_p90"] < 0.5 * summary["rest_residual_p90"]  # the base, most points, fits either way
    fitted, faces = load_mesh(fitted_path)
    lid = np.linalg.norm(target - V, axis=1) > 1e-6  # the turned lid's vertices
    to_fit, to_mesh = surface_distances(target[lid], fitted, F)[0], surface_distances(target[lid], V, F)[0]
    assert np.array_equal(faces, F) and to_fit < 0.4 * to_mesh, (to_fit, to_mesh)
    pieces = RigidPieces.of_mesh(V, F)  # every piece of the laptop moved rigidly, unless told otherwise
    assert np.abs(pieces.project(V, fitted) - fitted).max() < 1e-6
    assert summary["joints"] and summary["kept"] in ("joints", "learned")  # by default through the readout
    free = _fit_summary(capsys, mesh, tmp_path / "scan.xyz", "--out", fitted_path, "--no-rigid-pieces",
                        "--articulation", "none")  # the learned fit alone, as one deforming surface
    free_fit = load_mesh(fitted_path)[0]
    assert free["moved"] and np.abs(pieces.project(V, free_fit) - free_fit).max() > 1e-5

    np.save(tmp_path / "still.npy", sample_surface(V, F, 2048, np.random.default_rng(5)).points)
    still = _fit_summary(capsys, mesh, tmp_path / "still.npy")
    assert not still["moved"] and not any(still["q"])

    # one depth camera in front of the laptop and above it, which also sees a 6 cm ring of the table
    # the laptop stands on (0.5 mm below its base); those points are left out, so the base stays
    camera = V.mean(axis=0) + [0.0, -2.0, 1.0]
    (x0, y0, _), (x1, y1, _) = V.min(axis=0) - 0.06, V.max(axis=0) + 0.06
    table = np.array([[x0, y0, 0], [x1, y0, 0], [x1, y1, 0], [x0, y1, 0]]) + [0, 0, V[:, 2].min() - 5e-4]
    scene = (np.concatenate([target, table]), np.concatenate([F, len(V) + np.array([[0, 1, 2], [0, 2, 3]])]))
    np.save(tmp_path / "view.npy", visible_samples(*scene, camera, 2048, np.random.default_rng(6)))
    one_side = _fit_summary(capsys, mesh, tmp_path / "view.npy", "--partial", "--out", fitted_path,
                            "--png", tmp_path / "fit.png")
    assert one_side["moved"] and one_side["residual_p90"] < 0.5 * one_side["rest_residual_p90"]
    assert one_side["support_points"] > 0.2 * one_side["scan_points"]
    base_moved = np.linalg.norm(load_mesh(fitted_path)[0] - V, axis=1)[~lid]
    assert np.median(base_moved) < 0.005  # metres; 51 mm when the table's points are fitted too
    assert (tmp_path / "fit.png").stat().st_size > 10_000

    assert neurok_main(["fit", str(mesh), str(tmp_path / "view.npy"), "--trim", "1"]) == 2
    assert capsys.readouterr().err.strip() == "neurok fit: error: --trim must be in [0, 1), got 1"

    np.save(tmp_path / "elsewhere.npy", scan[np.isfinite(scan).all(axis=1)] + [0.0, 0.0, 25.0])
    assert neurok_main(["fit", str(mesh), str(tmp_path / "elsewhere.npy")]) == 2
    error = capsys.readouterr().err.strip()
    assert "in the mesh's frame and units" in error and len(error.splitlines()) == 1


def test_drop_support_leaves_out_the_table_and_keeps_what_hangs_below_it():
    vertices = np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 2.0]])  # lowest z: 1.0, the table's height
    table = np.column_stack([np.linspace(-1, 2, 50), np.zeros(50), 1.0 + np.linspace(-0.004, 0.004, 50)])
    body = np.array([[0.5, 0.5, 1.5], [0.2, 0.1, 1.9]])
    hanging = np.array([[1.2, 0.5, 0.6], [1.2, 0.5, 0.9]])  # over the table's edge, below it
    scan = np.concatenate([table, body, hanging])
    assert np.array_equal(drop_support(scan, vertices, 0.005), np.concatenate([body, hanging]))
    assert np.array_equal(drop_support(scan, vertices, 0.0), scan)
