"""Inside/outside by winding number: the octree of surface-free cells gives the point-by-point answers
on closed surfaces (one piece, interpenetrating pieces, inward faces) with far fewer evaluations, and
an open surface is evaluated point by point."""
import numpy as np
import pytest
import trimesh

from neurok_ros.geometry import occupancy
from neurok_ros.geometry.occupancy import free_cell_answers, inside_mesh, is_closed_surface, winding_inside

pytestmark = pytest.mark.unit

SPHERE = trimesh.creation.icosphere(subdivisions=4)  # 2,562 vertices, radius 1
SPHERE_V, SPHERE_F = np.asarray(SPHERE.vertices, dtype=np.float64), np.asarray(SPHERE.faces, dtype=np.int64)
BOX = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
BOX_V, BOX_F = np.asarray(BOX.vertices, dtype=np.float64), np.asarray(BOX.faces, dtype=np.int64)


def assembly() -> tuple[np.ndarray, np.ndarray]:
    """A sphere and a box pushed into it: two closed pieces whose overlap has winding number 2."""
    V = np.concatenate([SPHERE_V, BOX_V * [2.0, 0.6, 0.6] + [1.2, 0.0, 0.0]])
    F = np.concatenate([SPHERE_F, BOX_F + len(SPHERE_V)])
    return V, F


def box_points(V: np.ndarray, count: int, seed: int = 0) -> np.ndarray:
    low, high = V.min(axis=0) - 0.1, V.max(axis=0) + 0.1
    return low + np.random.default_rng(seed).random((count, 3)) * (high - low)


def counting(monkeypatch) -> list[int]:
    """Make occupancy.winding_inside record how many points each call evaluates."""
    counts = []

    def counted(V, F, P):
        counts.append(len(P))
        return winding_inside(V, F, P)
    monkeypatch.setattr(occupancy, "winding_inside", counted)
    return counts


def test_closed_surfaces_are_told_from_open_ones():
    V, F = assembly()
    assert is_closed_surface(SPHERE_F) and is_closed_surface(BOX_F) and is_closed_surface(F)
    assert is_closed_surface(SPHERE_F[:, ::-1])  # inward faces close as well
    assert not is_closed_surface(BOX_F[:-1])  # a missing triangle leaves a hole
    assert not is_closed_surface(np.concatenate([BOX_F, BOX_F[:1]]))  # a doubled triangle is no cycle
    assert not is_closed_surface(np.zeros((0, 3), dtype=np.int64))


@pytest.mark.parametrize("mesh", ["sphere", "inward sphere", "assembly"])
def test_octree_answers_equal_the_point_by_point_ones_with_fewer_evaluations(mesh, monkeypatch):
    V, F = {"sphere": (SPHERE_V, SPHERE_F), "inward sphere": (SPHERE_V, SPHERE_F[:, ::-1]),
            "assembly": assembly()}[mesh]
    points = box_points(V, 30_000)
    expected = winding_inside(V, F, points)
    counts = counting(monkeypatch)
    answers = inside_mesh(V, F, points)
    np.testing.assert_array_equal(answers, expected)
    assert len(counts) == 1 and counts[0] < 0.35 * len(points)  # one call, mostly answered by cells
    assert 0.1 < answers.mean() < 0.9


def test_the_overlap_of_two_pieces_is_inside_and_the_sphere_volume_is_right():
    V, F = assembly()
    overlap = np.array([[0.5, 0.0, 0.0], [0.9, 0.1, -0.1]])  # inside both pieces: winding number 2
    outside = np.array([[2.5, 0.0, 0.0], [0.0, 1.5, 0.0]])
    points = np.concatenate([overlap, outside, box_points(V, 20_000, seed=1)])
    answers = free_cell_answers(V, F, points)
    assert answers[:2].all() and not answers[2:4].any()
    sphere_points = box_points(SPHERE_V, 60_000, seed=2)
    fraction = free_cell_answers(SPHERE_V, SPHERE_F, sphere_points).mean()
    box_volume = float(np.prod(sphere_points.max(axis=0) - sphere_points.min(axis=0)))
    assert fraction * box_volume == pytest.approx(SPHERE.volume, rel=0.03)


def test_an_open_surface_and_few_points_are_evaluated_point_by_point(monkeypatch):
    counts = counting(monkeypatch)
    open_faces = SPHERE_F[SPHERE_V[SPHERE_F].mean(axis=1)[:, 2] < 0.8]  # a cap cut off
    points = box_points(SPHERE_V, 10_000)
    np.testing.assert_array_equal(inside_mesh(SPHERE_V, open_faces, points),
                                  winding_inside(SPHERE_V, open_faces, points))
    inside_mesh(SPHERE_V, SPHERE_F, points[:100])
    assert counts == [10_000, 100]
