"""Procedural articulated objects: primitives, kinematic tree, trajectories, every category generator."""
import functools
import json
import time

import numpy as np
import pytest
import trimesh

from neurok_ros.data.articulated import ARTICULATED_CATEGORIES, parts as P
from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject, make_instance, pose
from neurok_ros.data.articulated.motion import PROFILES, profile, sample_trajectory
from neurok_ros.data.instance_format import load_instance, save_instance, validate_instance
from neurok_ros.geometry import dual_quaternion as dq

pytestmark = pytest.mark.unit

CATEGORIES = sorted(ARTICULATED_CATEGORIES)
SEEDS = (0, 1, 2)
T = 16


@functools.lru_cache(maxsize=None)
def _instance(category, seed):
    return ARTICULATED_CATEGORIES[category](seed, T)


def _closed(V, F):
    mesh = trimesh.Trimesh(np.asarray(V, float), np.asarray(F), process=False)
    return mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0


# ----------------------------------------------------------------------------------------------
# Primitives
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,mesh", [
    ("box", P.box((0.3, 0.2, 0.1))),
    ("box_subdivided_tapered", P.box((1.0, 0.5, 0.02), (0.1, 0.2, 0.3), max_edge=0.1, taper=(0.6, 0.9))),
    ("open_box", P.open_box((0.5, 0.4, 0.6), (0, 0, 0.3), 0.02, "-y", max_edge=0.1)),
    ("lathe", P.lathe([0.03, 0.04, 0.04, 0.01], [0.0, 0.01, 0.2, 0.25], 16, (1, 1, 0))),
    ("cylinder", P.cylinder(0.1, 0.02, 20, (0, 1, 1), (1, 2, 3), segments=3)),
    ("frustum", P.frustum(0.05, 0.02, 0.1, 12, (0, 0, -1))),
    ("tube", P.tube([[0, 0, 0], [0, 0, 0.1], [0.03, 0, 0.14], [0.1, 0, 0.15]], 0.005, 8)),
    ("torus", P.torus(0.03, 0.005, 20, 8, (0, 1, 0), (0, 0, 1), (1.4, 1.0))),
    ("extrude", P.extrude([[0, 0], [0.1, 0], [0.12, 0.03], [0.03, 0.04]], 0.003)),
    ("bar_handle", P.bar_handle(0.15, 0.04, 0.006, (0, -0.2, 0.5), (1, 0, 0), (0, -1, 0))),
    ("knob", P.knob(0.02, 0.025, (0, 0, 0), (0, -1, 0))),
])
def test_primitives_are_closed_outward_meshes(name, mesh):
    V, F = mesh
    assert V.dtype == np.float64 and V.shape[1] == 3
    assert F.dtype == np.int64 and F.shape[1] == 3 and F.min() >= 0 and F.max() < len(V)
    components = trimesh.Trimesh(V, F, process=False).split(only_watertight=False)
    assert all(_closed(c.vertices, c.faces) for c in components), name


def test_box_volume_grid_and_taper():
    V, F = P.box((0.4, 0.2, 0.1), max_edge=0.05)
    mesh = trimesh.Trimesh(V, F, process=False)
    assert mesh.volume == pytest.approx(0.4 * 0.2 * 0.1)
    assert len(V) == 9 * 5 * 3 - 7 * 3 * 1  # surface points of an 8 x 4 x 2 grid
    V, F = P.box((1.0, 1.0, 1.0), taper=(0.5, 0.5))
    assert trimesh.Trimesh(V, F, process=False).volume == pytest.approx((1 + 0.5 + 0.25) / 3)


def test_lathe_cylinder_volume_and_axis():
    V, F = P.cylinder(0.1, 0.3, 64, (1, 0, 0), (1, 0, 0))
    mesh = trimesh.Trimesh(V, F, process=False)
    assert mesh.volume == pytest.approx(np.pi * 0.01 * 0.3, rel=0.01)
    np.testing.assert_allclose(mesh.bounds, [[0.85, -0.1, -0.1], [1.15, 0.1, 0.1]], atol=1e-9)


# ----------------------------------------------------------------------------------------------
# Kinematic tree and trajectories
# ----------------------------------------------------------------------------------------------
def _two_link():
    obj = ArticulatedObject()
    obj.add_part("base", P.box((0.2, 0.2, 0.1), (0, 0, 0.05)))
    j0 = obj.add_joint("yaw", "revolute", (0, 0, 1), (0, 0, 0), (-np.pi, np.pi))
    obj.add_part("link", P.box((0.3, 0.02, 0.02), (0.15, 0, 0.1)), j0)
    j1 = obj.add_joint("slide", "prismatic", (1, 0, 0), (0.3, 0, 0.1), (0.0, 0.2), parent=j0)
    obj.add_part("tip", P.box((0.02, 0.02, 0.02), (0.3, 0, 0.1)), j1)
    return obj


def test_pose_composes_down_the_chain():
    obj = _two_link()
    R, t = pose(obj, [[np.pi / 2, 0.1]])
    tip = R[0, 2] @ np.array([0.3, 0.0, 0.1]) + t[0, 2]
    np.testing.assert_allclose(tip, [0.0, 0.4, 0.1], atol=1e-12)  # slid 0.1 along x, then yawed 90 degrees
    np.testing.assert_allclose(R[0, 0], np.eye(3))
    with pytest.raises(ValueError):
        obj.add_joint("bad", "revolute", (0, 0, 1), (0, 0, 0), (0.0, 1.0), parent=5)
    with pytest.raises(ValueError):
        obj.add_joint("bad", "ball", (0, 0, 1), (0, 0, 0), (0.0, 1.0))


def test_make_instance_rest_frame_and_joint_metadata():
    obj = _two_link()
    traj = np.array([[0.0, 0.0], [0.5, 0.1], [1.0, 0.2]])
    inst = make_instance(obj, traj, [0.0, 0.1, 0.2], "toy", {"name": "toy", "version": "1", "seed": 0},
                         rest_joint_values=[np.pi / 2, 0.05])
    assert validate_instance(inst) == []
    slide = inst.joints[1]
    np.testing.assert_allclose(slide["axis"], [0, 1, 0], atol=1e-9)  # the rest pose's frame
    np.testing.assert_allclose(slide["pivot"], [0, 0.3, 0.1], atol=1e-9)
    assert slide["parent_part"] == 1 and slide["child_parts"] == [2] and inst.joints[0]["child_parts"] == [1, 2]
    np.testing.assert_allclose(dq.apply(inst.vertex_dual_quaternions, inst.rest_vertices[None]), inst.frames,
                               atol=1e-6)
    assert inst.generator["params"]["rest_joint_values"] == [np.pi / 2, 0.05]


def test_profiles_and_trajectory_sampling():
    s = np.linspace(0, 1, 11)
    for kind in PROFILES[:-1]:
        p = profile(kind, s)
        assert p.min() >= 0 and p.max() <= 1 and p[0] == 0
    rng = np.random.default_rng(0)
    ranges = np.array([[0.0, 1.0], [-2.0, 2.0], [0.0, 0.1]])
    for _ in range(50):
        rest = rng.uniform(ranges[:, 0], ranges[:, 1])
        traj, info = sample_trajectory(rng, rest, ranges, 12)
        assert traj.shape == (12, 3)
        np.testing.assert_array_equal(traj[0], rest)
        assert np.all(traj >= ranges[:, 0] - 1e-12) and np.all(traj <= ranges[:, 1] + 1e-12)
        assert any(i["moving"] for i in info)
        assert np.ptp(traj, axis=0).max() > 0


# ----------------------------------------------------------------------------------------------
# Category generators
# ----------------------------------------------------------------------------------------------
def test_at_least_ten_categories_and_three_multi_joint():
    assert len(CATEGORIES) >= 10
    joint_counts = {c: max(len(_instance(c, s).joints) for s in SEEDS) for c in CATEGORIES}
    assert sum(n >= 2 for n in joint_counts.values()) >= 3, joint_counts


@pytest.mark.parametrize("category", CATEGORIES)
def test_category_instances_are_valid_rigid_and_exact(category):
    rng = np.random.default_rng(0)
    for seed in SEEDS:
        inst = _instance(category, seed)
        assert validate_instance(inst) == [], (category, seed)
        assert inst.kind == "articulated" and inst.category == category
        n = inst.num_vertices
        assert inst.frames.shape == (T, n, 3) and 300 <= n <= 2500, n
        assert np.all(np.isfinite(inst.frames)) and np.all(np.isfinite(inst.vertex_dual_quaternions))
        assert np.all(inst.faces[:, 0] != inst.faces[:, 1]) and np.all(inst.faces[:, 1] != inst.faces[:, 2])
        json.dumps(inst.generator)
        assert inst.generator["seed"] == seed and inst.generator["params"]

        # exact dual quaternions: unit, identity-free reproduction of every frame
        assert np.allclose(np.linalg.norm(inst.vertex_dual_quaternions[..., :4], axis=-1), 1, atol=1e-5)
        np.testing.assert_allclose(dq.apply(inst.vertex_dual_quaternions, inst.rest_vertices[None]), inst.frames,
                                   atol=1e-5)

        size = np.ptp(inst.rest_vertices, axis=0).max()
        assert np.linalg.norm(inst.frames - inst.rest_vertices, axis=-1).max() > 0.01 * size

        for p in np.unique(inst.part_ids):
            idx = np.flatnonzero(inst.part_ids == p)
            faces = inst.faces[np.all(inst.part_ids[inst.faces] == p, axis=1)]
            assert _closed(inst.rest_vertices, faces), (category, seed, p)
            a, b = rng.choice(idx, 200), rng.choice(idx, 200)
            d_rest = np.linalg.norm(inst.rest_vertices[a] - inst.rest_vertices[b], axis=-1)
            d_t = np.linalg.norm(inst.frames[:, a] - inst.frames[:, b], axis=-1)
            assert np.abs(d_t - d_rest).max() < 1e-5, (category, seed, p)
        # every face lies within one part
        assert np.all(inst.part_ids[inst.faces] == inst.part_ids[inst.faces[:, :1]])


@pytest.mark.parametrize("category", CATEGORIES)
def test_joint_metadata_explains_the_motion(category):
    """Frames = product over each part's joint chain of the rest-pose joint motions by (q_t - q_rest)."""
    for seed in SEEDS:
        inst = _instance(category, seed)
        q = inst.joint_values.astype(float)
        q_rest = np.array(inst.generator["params"]["rest_joint_values"])
        for j, joint in enumerate(inst.joints):
            lo, hi = joint["range"]
            assert joint["type"] in ("revolute", "prismatic") and lo < hi
            assert np.all(q[:, j] >= lo - 1e-5) and np.all(q[:, j] <= hi + 1e-5), (category, seed, joint["name"])
            assert lo - 1e-9 <= q_rest[j] <= hi + 1e-9
            assert abs(np.linalg.norm(joint["axis"]) - 1) < 1e-9
        for p in range(inst.part_ids.max() + 1):
            chain = [j for j, joint in enumerate(inst.joints) if p in joint["child_parts"]]
            V = inst.rest_vertices[inst.part_ids == p].astype(float)
            expected = np.repeat(V[None], T, axis=0)
            for j in reversed(chain):  # the deepest joint acts first
                joint = inst.joints[j]
                axis, pivot = np.array(joint["axis"]), np.array(joint["pivot"])
                delta = q[:, j] - q_rest[j]
                if joint["type"] == "prismatic":
                    expected = expected + delta[:, None, None] * axis
                else:
                    R = np.stack([P.rotation(axis, a) for a in delta])
                    expected = np.einsum("tab,tnb->tna", R, expected - pivot) + pivot
            np.testing.assert_allclose(inst.frames[:, inst.part_ids == p], expected, atol=1e-4)


@pytest.mark.parametrize("category", CATEGORIES)
def test_category_is_deterministic_and_seeds_differ(category):
    generate = ARTICULATED_CATEGORIES[category]
    a, b = generate(7, 6), generate(7, 6)
    for name in ("rest_vertices", "faces", "frames", "times", "vertex_dual_quaternions", "part_ids", "joint_values"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.joints == b.joints and a.generator == b.generator
    c = generate(8, 6)
    assert c.generator["params"] != a.generator["params"]
    assert c.rest_vertices.shape != a.rest_vertices.shape or not np.allclose(c.rest_vertices, a.rest_vertices)


def test_instance_round_trips_through_the_file_format(tmp_path):
    inst = _instance("lamp", 0)
    save_instance(tmp_path / "lamp.npz", inst)
    back = load_instance(tmp_path / "lamp.npz")
    assert back.joints == inst.joints and back.generator == inst.generator
    np.testing.assert_array_equal(back.vertex_dual_quaternions, inst.vertex_dual_quaternions)


def test_generation_is_fast():
    """16-frame instances take well under 0.15 s each (median over categories; measured ~5-40 ms)."""
    times = []
    for category in CATEGORIES:
        start = time.perf_counter()
        ARTICULATED_CATEGORIES[category](123, 16)
        times.append(time.perf_counter() - start)
    assert np.median(times) < 0.15, dict(zip(CATEGORIES, times))
