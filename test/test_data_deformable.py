"""Elastic and cloth instances simulated with MuJoCo flexes (neurok_ros.data.deformable)."""
import numpy as np
import pytest

from neurok_ros.data.deformable import CLOTH_CATEGORIES, ELASTIC_CATEGORIES
from neurok_ros.data.deformable.cloth_hanging import cloth_body, hanging_sheet
from neurok_ros.data.deformable.elastic_beam import beam_recording
from neurok_ros.data.deformable.flex_meshes import (
    grid_points,
    grid_tetrahedra,
    sheet_points,
    sheet_triangles,
    tetrahedra_boundary,
)
from neurok_ros.data.deformable.kabsch_fit import fit_errors, fit_vertex_dual_quaternions
from neurok_ros.data.deformable.mujoco_flex import FlexLoads, FlexSimulationError, SimSettings, simulate_flex
from neurok_ros.data.instance_format import validate_instance
from neurok_ros.geometry import dual_quaternion as dq

pytestmark = pytest.mark.unit

FRAMES = 6
SEED = 3  # every category deforms visibly at this seed (checked below)


@pytest.fixture(scope="module")
def instances():
    table = {**ELASTIC_CATEGORIES, **CLOTH_CATEGORIES}
    return {name: generate(SEED, FRAMES) for name, generate in table.items()}


def _edges(faces):
    return np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])


def _nonrigid_residual(instance):
    """Max over frames of the best whole-body rigid fit's max residual, over the bbox diagonal."""
    rest = instance.rest_vertices.astype(np.float64)
    diagonal = np.linalg.norm(np.ptp(rest, axis=0))
    a = rest - rest.mean(axis=0)
    worst = 0.0
    for frame in instance.frames.astype(np.float64):
        b = frame - frame.mean(axis=0)
        u, _, vt = np.linalg.svd(a.T @ b)
        d = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))])
        rotation = (u @ d @ vt).T
        worst = max(worst, np.linalg.norm(a @ rotation.T - b, axis=1).max())
    return worst / diagonal


def test_categories_registered():
    assert set(ELASTIC_CATEGORIES) >= {"elastic_beam", "soft_blob", "soft_stem"}
    assert set(CLOTH_CATEGORIES) >= {"cloth_hanging", "cloth_corner_lift"}


def test_every_category_gives_a_valid_instance(instances):
    for name, inst in instances.items():
        assert validate_instance(inst) == [], name
        assert inst.kind == ("elastic" if name in ELASTIC_CATEGORIES else "cloth")
        assert inst.category == name and inst.num_frames == FRAMES
        assert inst.frames.shape == (FRAMES, inst.num_vertices, 3)
        assert inst.joint_values.shape == (FRAMES, 0) and inst.joints == []
        assert 100 <= inst.num_vertices <= 700, (name, inst.num_vertices)
        assert np.all(np.isfinite(inst.frames)) and np.all(np.isfinite(inst.vertex_dual_quaternions))
        # fixed topology: every vertex is used by the one face list shared by all frames
        assert np.array_equal(np.unique(inst.faces), np.arange(inst.num_vertices))
        assert np.allclose(inst.frames[0], inst.rest_vertices, atol=1e-6)  # frame 0 is the rest state
        generator = inst.generator
        assert generator["name"] == name and generator["seed"] == SEED and generator["version"]
        assert isinstance(generator["params"], dict) and generator["params"]


def test_closed_outward_surface_of_soft_solids(instances):
    for name in ELASTIC_CATEGORIES:
        inst = instances[name]
        edges = np.sort(_edges(inst.faces), axis=1)
        _, counts = np.unique(edges, axis=0, return_counts=True)
        assert np.all(counts == 2), name  # closed 2-manifold boundary
        v = inst.rest_vertices.astype(np.float64)[inst.faces]
        volume = np.einsum("ij,ij->i", v[:, 0], np.cross(v[:, 1], v[:, 2])).sum() / 6
        assert volume > 0, name  # outward normals


def test_cloth_pins_hold_and_edges_barely_stretch(instances):
    for name in CLOTH_CATEGORIES:
        inst = instances[name]
        rest = inst.rest_vertices.astype(np.float64)
        if inst.pinned.any():
            drift = np.abs(inst.frames[:, inst.pinned] - rest[inst.pinned]).max()
            assert drift < 1e-4, (name, drift)
        edges = _edges(inst.faces)
        rest_length = np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1)
        length = np.linalg.norm(inst.frames[:, edges[:, 0]] - inst.frames[:, edges[:, 1]], axis=2)
        assert np.abs(length / rest_length - 1).max() < 0.10, name
    assert instances["cloth_hanging"].pinned.any()


def test_clamped_vertices_of_elastic_bodies_stay_put(instances):
    for name in ("elastic_beam", "soft_stem"):
        inst = instances[name]
        assert inst.pinned.any(), name
        drift = np.abs(inst.frames[:, inst.pinned] - inst.rest_vertices[inst.pinned]).max()
        assert drift < 1e-4, (name, drift)


def test_soft_bodies_really_deform(instances):
    for name in ELASTIC_CATEGORIES:
        assert _nonrigid_residual(instances[name]) > 0.02, name


def test_same_seed_same_arrays():
    for table, name in ((CLOTH_CATEGORIES, "cloth_hanging"), (ELASTIC_CATEGORIES, "soft_stem")):
        a, b = table[name](11, 3), table[name](11, 3)
        for field in ("rest_vertices", "faces", "frames", "times", "vertex_dual_quaternions", "pinned"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), (name, field)
        assert a.generator == b.generator


BEAM = dict(length=0.4, width=0.04, height=0.04, young=5e6, poisson=0.3, damping=0.01, density=800.0,
            points_across=3, duration=0.5, num_frames=6)


def _tip_sag(**changes):
    recording = beam_recording(**{**BEAM, **changes})
    tip = recording.rest[:, 0] >= recording.rest[:, 0].max() - 1e-9
    return float(-(recording.frames[:, tip, 2] - recording.rest[tip, 2]).mean(axis=1).min())


def test_beam_sag_grows_with_load_and_shrinks_with_stiffness():
    base = _tip_sag()
    assert base > 0.01
    assert _tip_sag(density=1600.0) > 1.3 * base
    assert _tip_sag(tip_force=(0.0, 0.0, -2.0), force_start=0.0, force_rise=0.05) > 1.3 * base
    assert _tip_sag(young=1.5e7) < 0.7 * base


def _random_rotations(rng, count):
    q = rng.normal(size=(count, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return dq.quaternion_to_matrix(q)


@pytest.mark.parametrize("mesh", ["solid", "sheet"])
def test_kabsch_dual_quaternions_reproduce_rigid_motion(mesh):
    rng = np.random.default_rng(0)
    if mesh == "solid":
        points = grid_points((5, 3, 3), (0.4, 0.1, 0.1))
        faces = tetrahedra_boundary(grid_tetrahedra((5, 3, 3)), points)
    else:  # flat: every one-ring is planar, corners have two neighbours
        points, faces = sheet_points((6, 5), (0.5, 0.4)), sheet_triangles((6, 5))
    rotations = _random_rotations(rng, 4)
    translations = rng.normal(size=(4, 3))
    frames = np.einsum("tab,nb->tna", rotations, points) + translations[:, None]
    for exact in (True, False):
        d = fit_vertex_dual_quaternions(points, frames, faces, exact_at_vertex=exact)
        moved = dq.apply(d.astype(np.float64), points[None])
        assert np.abs(moved - frames).max() < 1e-5
        rotation, _ = dq.to_rotation_translation(d.astype(np.float64))
        assert np.abs(rotation - rotations[:, None]).max() < 1e-5


def test_kabsch_dual_quaternions_approximate_a_deformation():
    recording = beam_recording(**{**BEAM, "density": 1600.0})
    rest, frames, faces = recording.rest, recording.frames, recording.faces
    diagonal = np.linalg.norm(np.ptp(rest, axis=0))
    exact = fit_errors(rest, frames, faces, fit_vertex_dual_quaternions(rest, frames, faces))
    centroid = fit_errors(rest, frames, faces, fit_vertex_dual_quaternions(rest, frames, faces, exact_at_vertex=False))
    print(f"\nbeam sag {np.abs(frames - rest).max():.3f} m, diagonal {diagonal:.3f} m; "
          f"exact-at-vertex fit: vertex {exact['vertex_max']:.1e} m, ring rms {exact['ring_rms']:.1e} m; "
          f"centroid fit: vertex {centroid['vertex_max']:.1e} m, ring rms {centroid['ring_rms']:.1e} m")
    assert exact["vertex_max"] < 1e-5
    assert exact["ring_rms"] < 0.01 * diagonal
    assert centroid["vertex_max"] < 0.02 * diagonal and centroid["ring_rms"] < 0.01 * diagonal
    assert centroid["ring_rms"] <= exact["ring_rms"] + 1e-6  # the unconstrained fit is the better ring fit


def test_blow_up_guard_raises():
    points, triangles, top = hanging_sheet(0.3, 0.3, np.pi / 2, (6, 6))
    pinned = np.zeros(len(points), bool)
    pinned[top] = True
    body = cloth_body(points, triangles, pinned, 0.3, 0.3, 0.2, 2000.0, 0.0005, 0.3, 0.005)
    with pytest.raises(FlexSimulationError):
        simulate_flex(body, FlexLoads(), SimSettings(max_displacement=0.01), 0.5, 3)


def test_tetrahedra_boundary_of_a_grid():
    count = (4, 3, 5)
    points = grid_points(count, (0.3, 0.2, 0.4))
    faces = tetrahedra_boundary(grid_tetrahedra(count), points)
    # 2 triangles per boundary grid square
    squares = 2 * ((4 - 1) * (3 - 1) + (4 - 1) * (5 - 1) + (3 - 1) * (5 - 1))
    assert len(faces) == 2 * squares
    v = points[faces]
    volume = np.einsum("ij,ij->i", v[:, 0], np.cross(v[:, 1], v[:, 2])).sum() / 6
    assert volume == pytest.approx(0.3 * 0.2 * 0.4)


def test_degenerate_one_ring_falls_back_to_nearest_vertices():
    from neurok_ros.data.deformable.kabsch_fit import vertex_neighbourhoods

    # vertex 0 lies only in a zero-area triangle with 1 and 2 (collinear ring)
    points = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0.5], [0, 2, 0.2]], float)
    faces = np.array([[0, 1, 2], [3, 4, 5]])
    index, mask = vertex_neighbourhoods(faces, points, k_fallback=4)
    assert index[0, 0] == 0 and mask[0].sum() == 5
    assert set(index[0][mask[0]]) == {0, 1, 2, 3, 4}
    assert mask[3].sum() == 3  # a proper triangle keeps its one-ring
