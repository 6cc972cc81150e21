"""The articulation head: its training targets, its vote grouping, training and loading."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from neurok_ros.articulation.head_readout import line_distances
from neurok_ros.data.articulated import ARTICULATED_CATEGORIES
from neurok_ros.errors import NeurokInputError
from neurok_ros.model.articulation_head import ArticulationHead, load_head, save_head
from neurok_ros.training.articulation_examples import articulation_example

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]


def one_hot(classes: np.ndarray) -> np.ndarray:
    return np.eye(3)[classes]


def test_laptop_targets_put_the_lid_on_its_hinge():
    instance = ARTICULATED_CATEGORIES["laptop"](5, 16)
    example = articulation_example(instance, 7, np.random.default_rng(0))
    classes, queries = example["classes"], example["queries"].astype(np.float64)
    assert set(np.unique(classes)) == {0, 1}
    lid = classes == 1
    axes = example["axis"][lid].astype(np.float64)
    assert np.allclose(np.abs(axes @ axes[0]), 1.0, atol=1e-5)  # one hinge for the whole lid
    hinge_points = queries[lid] + example["offset"][lid]
    assert line_distances(hinge_points, hinge_points[0], axes[0]).max() < 1e-4
    assert np.abs(example["offset"][~lid]).max() == 0 and np.abs(example["axis"][~lid]).max() == 0
    # the hinge lies on the laptop's edge: within the normalised box, at the lid's border
    assert np.abs(hinge_points).max() <= 0.5 + 1e-3


def test_head_trains_saves_and_loads_weights_only(tmp_path):
    from neurok_ros.kinematics.instance import load_default_model
    from neurok_ros.training.articulation_training import train_articulation_head

    model, _ = load_default_model()
    instances = [ARTICULATED_CATEGORIES["laptop"](s, 16) for s in (1, 2)]
    path = tmp_path / "head.pt"
    best = train_articulation_head(model, instances, instances, path, minutes=5, batch_size=2, max_steps=3,
                                   val_every=3, progress=False)
    assert {"loss", "class_accuracy", "axis_deg"} <= set(best)
    head = load_head(path)
    out = head(torch.zeros(1, 16, 128), torch.zeros(1, 5, 3))
    assert out.logits.shape == (1, 5, 3) and torch.allclose(out.axis.norm(dim=-1), torch.ones(1, 5), atol=1e-4)
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(NeurokInputError):
        load_head(tmp_path / "bad.pt")
    save_head(tmp_path / "again.pt", ArticulationHead(), {"note": "untrained"})
    assert isinstance(load_head(tmp_path / "again.pt"), ArticulationHead)


def box_points(low, high, count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, 3) points filling an axis-aligned box (a piece's samples)."""
    return rng.uniform(low, high, size=(count, 3))


def test_piece_votes_keep_two_doors_apart_and_give_the_handle_its_door():
    from neurok_ros.articulation.head_readout import piece_parts

    rng = np.random.default_rng(0)
    # carcass, a left and a right door meeting at x = 0 (hinges at x = -0.4 and x = +0.4, front
    # edge y = -0.32), and a bar handle on the left door whose line votes are off by 0.2
    pieces = [box_points((-0.4, -0.3, -0.5), (0.4, 0.3, 0.5), 200, rng),
              box_points((-0.4, -0.32, -0.5), (-0.001, -0.3, 0.5), 100, rng),
              box_points((0.001, -0.32, -0.5), (0.4, -0.3, 0.5), 100, rng),
              box_points((-0.08, -0.36, -0.1), (-0.06, -0.32, 0.1), 30, rng)]
    points = np.concatenate(pieces)
    piece = np.concatenate([np.full(len(p), i) for i, p in enumerate(pieces)])
    classes = np.where(piece == 0, 0, 1)
    hinge = {1: (-0.4, -0.32), 2: (0.4, -0.32), 3: (-0.2, -0.32)}
    offsets = np.zeros_like(points)
    for p, (x, y) in hinge.items():
        offsets[piece == p, 0] = x - points[piece == p, 0]
        offsets[piece == p, 1] = y - points[piece == p, 1]
    axes = np.tile([0.0, 0.0, 1.0], (len(points), 1))
    probabilities = one_hot(classes) * 0.8 + 0.1
    touching = np.array([[1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 0], [0, 1, 0, 1]], dtype=bool)
    labels, votes = piece_parts(points, probabilities, axes, offsets, piece, touching, np.eye(4, dtype=bool))
    assert len(votes) == 2 and all(v.type == "revolute" for v in votes)
    assert len(set(labels[piece == 1]) | set(labels[piece == 2])) == 2  # the doors stay apart
    assert set(labels[piece == 3]) == set(labels[piece == 1])  # the handle moves with its door
    assert (labels[piece == 0] == 0).all()
    for vote in votes:
        assert abs(vote.axis[2]) > 0.999
        assert min(abs(abs(vote.origin[0]) - 0.4), 1.0) < 0.05  # each on its own hinge line


def test_piece_gaps_measure_surfaces_not_samples():
    from neurok_ros.articulation.head_readout import piece_gaps

    # three unit-square plates in z = 0, z = 0.01 and z = 0.3, two triangles each, one sample each
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=np.float64)
    vertices = np.concatenate([square + [0, 0, z] for z in (0.0, 0.01, 0.3)])
    faces = np.concatenate([np.array([[0, 1, 2], [0, 2, 3]]) + 4 * p for p in range(3)])
    face_pieces = np.repeat(np.arange(3), 2)
    points = np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.01], [0.5, 0.5, 0.3]])  # far apart in the plane
    gaps = piece_gaps(vertices, faces, face_pieces, points, np.arange(3))
    near = gaps < 0.02
    assert near[0, 1] and near[1, 0] and not near[0, 2] and not near[1, 2]
    assert not (gaps < 0.005)[0, 1]


def test_two_doors_stacked_on_one_hinge_line_stay_two_and_hang_from_the_body():
    from neurok_ros.articulation.head_readout import JointVote, piece_parts
    from neurok_ros.articulation.readout import touching_parent

    rng = np.random.default_rng(1)
    # a body (its front face), an upper and a lower door hinged on the line x = -0.4, y = -0.32,
    # 4 mm apart in z
    pieces = [box_points((-0.4, -0.3, -0.5), (0.4, -0.29, 0.5), 1000, rng),
              box_points((-0.4, -0.32, 0.002), (0.4, -0.3, 0.5), 100, rng),
              box_points((-0.4, -0.32, -0.5), (0.4, -0.3, -0.002), 100, rng)]
    points = np.concatenate(pieces)
    piece = np.concatenate([np.full(len(p), i) for i, p in enumerate(pieces)])
    offsets = np.zeros_like(points)
    offsets[piece > 0, 0] = -0.4 - points[piece > 0, 0]
    offsets[piece > 0, 1] = -0.32 - points[piece > 0, 1]
    axes = np.tile([0.0, 0.0, 1.0], (len(points), 1))
    probabilities = one_hot(np.where(piece == 0, 0, 1)) * 0.8 + 0.1
    touching, apart = np.ones((3, 3), dtype=bool), np.eye(3, dtype=bool)
    merged, _ = piece_parts(points, probabilities, axes, offsets, piece, touching, apart)
    assert len(set(merged[piece > 0])) == 1  # touching within the adjacency gap: one part
    labels, votes = piece_parts(points, probabilities, axes, offsets, piece, touching, apart, hinged=apart)
    assert len(votes) == 2 and len(set(labels[piece == 1]) | set(labels[piece == 2])) == 2
    hinge = JointVote("revolute", np.array([0.0, 0.0, 1.0]), np.array([-0.4, -0.32, 0.0]), 1.0)
    for child in (1, 2):
        assert touching_parent(child, labels, points, hinge, 0.02) == 0


def drawer_votes(rng: np.random.Generator):
    """A carcass (piece 0), a drawer's front and bottom (1, 2) voted still (probability of "none"
    0.6) and its handle (3) voted to slide along -y: samples, votes and pieces for piece_parts."""
    pieces = [box_points((-0.5, -0.3, -0.5), (0.5, 0.3, 0.5), 300, rng),
              box_points((-0.45, -0.34, -0.2), (0.45, -0.32, 0.2), 100, rng),
              box_points((-0.45, -0.32, -0.2), (0.45, 0.28, -0.19), 100, rng),
              box_points((-0.1, -0.37, -0.02), (0.1, -0.34, 0.02), 20, rng)]
    points = np.concatenate(pieces)
    piece = np.concatenate([np.full(len(p), i) for i, p in enumerate(pieces)])
    probabilities = np.where((piece == 3)[:, None], [0.2, 0.1, 0.7], [0.6, 0.1, 0.3])
    probabilities[piece == 0] = [0.9, 0.05, 0.05]
    axes = np.tile([0.0, -1.0, 0.0], (len(points), 1))
    return points, probabilities, axes, np.zeros_like(points), piece


def test_a_drawer_glued_together_but_clear_of_its_carcass_slides_whole():
    from neurok_ros.articulation.head_readout import piece_parts

    points, probabilities, axes, offsets, piece = drawer_votes(np.random.default_rng(2))
    touching = np.ones((4, 4), dtype=bool)
    glued = np.eye(4, dtype=bool)
    glued[1, 2] = glued[2, 1] = glued[1, 3] = glued[3, 1] = True  # front, bottom and handle; a gap to the carcass
    labels, votes = piece_parts(points, probabilities, axes, offsets, piece, touching, glued)
    assert len(votes) == 1 and votes[0].type == "prismatic" and abs(votes[0].axis[1]) > 0.999
    assert (labels[piece > 0] == 1).all() and (labels[piece == 0] == 0).all()
    glued[0, 2] = glued[2, 0] = True  # the bottom glued to the carcass: the votes decide again
    labels, _ = piece_parts(points, probabilities, axes, offsets, piece, touching, glued)
    assert (labels[piece == 3] == 1).all() and (labels[piece < 3] == 0).all()


def test_gap_probes_find_a_small_piece_glued_on_by_its_corners():
    from neurok_ros.articulation.head_readout import piece_gaps
    from neurok_ros.articulation.readout import gap_probes

    # a plate (piece 0) and a 2 cm cube (piece 1) sitting on it; the cube's one sample is on its top
    plate = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=np.float64)
    cube = np.array([[x, y, z] for z in (0.0, 0.02) for y in (0.5, 0.52) for x in (0.5, 0.52)])
    vertices = np.concatenate([plate, cube])
    quads = [(0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5)]
    cube_faces = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]) + 4
    faces = np.concatenate([np.array([[0, 1, 2], [0, 2, 3]]), cube_faces])
    face_pieces = np.array([0, 0] + [1] * len(cube_faces))
    vertex_pieces = np.array([0] * 4 + [1] * 8)
    rest, pieces = np.array([[0.2, 0.8, 0.0], [0.51, 0.51, 0.02]]), np.array([0, 1])
    assert not piece_gaps(vertices, faces, face_pieces, rest, pieces)[0, 1] < 1e-4  # the samples miss
    probes, probe_pieces = gap_probes(vertices, vertex_pieces, rest, pieces)
    assert piece_gaps(vertices, faces, face_pieces, probes, probe_pieces)[0, 1] < 1e-4
