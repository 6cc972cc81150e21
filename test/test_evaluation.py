"""`neurok eval`: pose-pair selection, the PCA baseline's grid field and fit, and an end-to-end run on a
tiny generated dataset with a tiny untrained model."""
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
import torch

from neurok_ros.cli import main as neurok_main
from neurok_ros.config_files import config_path
from neurok_ros.data.articulated.parts import box
from neurok_ros.data.instance_format import load_instance
from neurok_ros.errors import NeurokInputError
from neurok_ros.evaluation.grid_field import RegularGrid, splat_inverse_distance, trilinear
from neurok_ros.evaluation.pca_baseline import PCAConfig, PCASubspace, fit_pca_pose, load_or_fit_subspace
from neurok_ros.evaluation.pose_pairs import (
    choose_poses,
    pair_camera,
    pair_heading,
    pose_pair,
    pose_vertices,
    select_files,
    target_samples,
)
from neurok_ros.evaluation.report import fmt_l1, paired_difference, paired_table
from neurok_ros.evaluation.runner import EvalConfig, run_evaluation
from neurok_ros.geometry.metrics import metrics_in_frame
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.kinematics.inverse_kinematics import IKConfig
from neurok_ros.model import NeuROKModel
from neurok_ros.model.checkpoint import save_checkpoint
from neurok_ros.training.run_config import load_run_config

sys.path.insert(0, str(Path(__file__).parent))
from toy_kinematic_data import write_toy_dataset  # noqa: E402

pytestmark = [pytest.mark.unit, pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]


def affine_field(points, A, b):
    return points @ A.T + b


def test_trilinear_reproduces_an_affine_field_exactly():
    grid = RegularGrid(8, -0.6, 0.6)
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(3, 3)), rng.normal(size=3)
    values = torch.as_tensor(affine_field(grid.nodes(), A, b)).reshape(8, 8, 8, 3)
    points = rng.uniform(-0.6, 0.6, size=(500, 3))
    points[:3] = [[-0.6, -0.6, -0.6], [0.6, 0.6, 0.6], [0.6, -0.6, 0.0]]  # corners and faces of the cube
    out = trilinear(values, torch.as_tensor(points), grid)
    np.testing.assert_allclose(out.numpy(), affine_field(points, A, b), atol=1e-12)
    # batched values, gradients reach the node values, outside points are clamped to the cube
    batch = torch.stack([values, 2 * values]).requires_grad_(True)
    out = trilinear(batch, torch.as_tensor(points[:10]), grid)
    np.testing.assert_allclose(out[1].detach().numpy(), 2 * affine_field(points[:10], A, b), atol=1e-12)
    out.sum().backward()
    assert batch.grad is not None and batch.grad.abs().sum() > 0
    outside = trilinear(values, torch.tensor([[5.0, 0.0, 0.0]], dtype=torch.float64), grid)
    np.testing.assert_allclose(outside.numpy(), affine_field(np.array([[0.6, 0.0, 0.0]]), A, b), atol=1e-12)
    # splatting a constant field gives that constant on every node
    constant = splat_inverse_distance(grid, rng.uniform(-0.5, 0.5, (200, 3)), np.tile([1.0, -2.0, 0.5], (200, 1)))
    np.testing.assert_allclose(constant, np.tile([1.0, -2.0, 0.5], (grid.num_nodes, 1)))


def synthetic_subspace(grid: RegularGrid) -> PCASubspace:
    """Three orthonormal grid fields: translation along x, translation along y, stretch along z."""
    nodes = grid.nodes()
    fields = np.zeros((3, grid.num_nodes, 3))
    fields[0, :, 0] = 1.0
    fields[1, :, 1] = 1.0
    fields[2, :, 2] = nodes[:, 2]
    components = fields.reshape(3, -1)
    components /= np.linalg.norm(components, axis=1, keepdims=True)
    std = np.array([0.1, 0.1, 0.3]) / np.abs(components).max(axis=1)  # c = 1: a 0.1 shift, a 30% stretch
    return PCASubspace(np.zeros(grid.num_nodes * 3), components, std, np.full(3, 1 / 3), grid, {})


def pca_fit_config(**changes) -> IKConfig:
    """The PCA fit's settings these tests were chosen with: 512 samples, 60 + 30 steps at 0.15 and 0.03,
    prior weight 1e-4, one sample set, no rigid pieces, every start to the end."""
    return replace(IKConfig(points=512, q_steps=60, z_steps=30, z_rate=0.03, prior_weight=1e-4, sample_sets=1,
                            rigid_pieces=False, rigidity_weight=0.0, piece_steps=0, piece_links=False, q_keep=0),
                   **changes)


def test_pca_fit_recovers_a_known_coefficient_vector():
    grid = RegularGrid(8, -0.6, 0.6)
    subspace = synthetic_subspace(grid)
    V, F = box([0.5, 0.3, 0.4], center=[0.2, -0.1, 1.0], max_edge=0.05)
    transform = NormalisingTransform.from_vertices(V)
    c_true = np.array([0.8, -0.6, 0.5])
    normalised = torch.as_tensor(transform.apply(V))
    moved = normalised + trilinear(subspace.node_values(torch.as_tensor(c_true))[0].double(), normalised, grid)
    target_vertices = transform.invert(moved.numpy())
    target = target_samples(target_vertices, F, seed=0, count=2048)
    fit = fit_pca_pose(subspace, V, F, target, pca_fit_config(starts=2))
    np.testing.assert_allclose(fit.coefficients, c_true, atol=0.05)
    assert np.abs(fit.vertices - target_vertices).max() < 0.01 * np.ptp(V, axis=0).max()
    # the second start (no displacement) is the projection of the zero field
    np.testing.assert_allclose(subspace.coefficients_of(np.zeros(grid.num_nodes * 3)), 0.0, atol=1e-12)


def test_pca_fit_registers_the_pieces_its_field_cannot_move_apart():
    """Two boxes, of which only the upper one moves (up) in the observation: the field's stretch
    along z moves the two boxes apart but not by a translation of the upper one alone, so the fit
    leaves an error on both; with piece registration (piece_steps, as in fit_pose) each box, a group
    of its own since the fit moves them differently, is moved onto its own points."""
    grid = RegularGrid(8, -0.6, 0.6)
    subspace = synthetic_subspace(grid)
    lower, lower_faces = box([0.5, 0.3, 0.2], center=[0.0, 0.0, 0.1], max_edge=0.05)
    upper, upper_faces = box([0.5, 0.3, 0.1], center=[0.0, 0.0, 0.3], max_edge=0.05)
    V = np.concatenate([lower, upper])
    F = np.concatenate([lower_faces, upper_faces + len(lower)])
    true = V.copy()
    true[len(lower):, 2] += 0.06
    target = target_samples(true, F, seed=0, count=2048)
    config = pca_fit_config(starts=2, rigid_pieces=True, rigidity_weight=0.3)
    alone = fit_pca_pose(subspace, V, F, target, config)
    registered = fit_pca_pose(subspace, V, F, target, replace(config, piece_steps=20))
    error_alone = np.linalg.norm(alone.vertices - true, axis=1).mean()
    error = np.linalg.norm(registered.vertices - true, axis=1).mean()
    assert error < 0.3 * error_alone, (error_alone, error)


def test_pose_pair_selection_is_deterministic_and_distinct():
    files = [f"{c}_{i:04d}.npz" for c in ("laptop", "cloth_wind", "door") for i in range(7)]
    chosen = select_files(files, 3, seed=4)
    assert chosen == select_files(list(reversed(files)), 3, seed=4)
    assert len(chosen) == 9 and len(set(chosen)) == 9
    assert sorted({name.rsplit("_", 1)[0] for name in chosen}) == ["cloth_wind", "door", "laptop"]
    assert sorted(select_files(files, None, seed=4)) == sorted(files)
    assert any(select_files(files, 3, seed=s) != chosen for s in range(5, 10))
    # a category's choice depends on the seed and its own files only
    assert select_files(files[:7], 3, seed=4) == [f for f in chosen if f.startswith("laptop")]
    for num_poses in (2, 3, 17):
        pairs = [choose_poses(name, num_poses, seed=1) for name in files]
        assert pairs == [choose_poses(name, num_poses, seed=1) for name in files]
        assert all(a != b and 0 <= a < num_poses and 0 <= b < num_poses for a, b in pairs)
    assert len({choose_poses(name, 17, seed=1) for name in files}) > 5


def tiny_checkpoint(path: Path, output: str = "dual_quaternion") -> Path:
    run = load_run_config(config_path("model/tiny.yaml"), [f"model.output={output}"])
    torch.manual_seed(0)
    model = NeuROKModel(run.model)
    dataset = {"train_instances": 6, "train_categories": ["toy_bar", "toy_drawer", "toy_laptop"],
               "dataset_version": "1", "seed": 7, "frames": 5, "holdout_categories": []}
    return save_checkpoint(path, model, run.to_dict(), step=2, metrics={"val_point_error": 0.5}, dataset=dataset)


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory):
    root = write_toy_dataset(tmp_path_factory.mktemp("eval4d"), train=2, val=1, frames=5)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["splits"]["test"] = ["toy_laptop_0002.npz"]  # one test pair: the table's numbers are that pair's
    manifest["splits"]["val"].remove("toy_laptop_0002.npz")
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_paired_difference_of_two_methods_over_shared_pairs():
    # B beats A by 0.1 IoU on pairs 0-2, loses by 0.2 on pair 3; pair 4 is a tie, pair 5 has no IoU
    # for A (undefined): 5 shared pairs, mean (0.3 - 0.2) / 5 = 0.02.
    iou_a = [0.5, 0.5, 0.5, 0.5, 0.7, None]
    iou_b = [0.6, 0.6, 0.6, 0.3, 0.7, 0.9]
    records = [{"method": m, "file": f"p{i}", "iou": v, "chamfer_l1": 0.01, "error": None}
               for m, values in (("a", iou_a), ("b", iou_b)) for i, v in enumerate(values)]
    d = paired_difference(records, "a", "b", "iou")
    assert d["pairs"] == 5 and d["mean"] == pytest.approx(0.02)
    assert d["low"] < d["mean"] < d["high"] and d["low"] >= -0.2 and d["high"] <= 0.1
    assert (d["other_better"], d["reference_better"]) == (3, 1)
    assert d == paired_difference(records, "a", "b", "iou")  # seeded bootstrap
    # lower Chamfer is better: B 0.001 below A on every pair
    for r in records:
        r["chamfer_l1"] -= 0.001 if r["method"] == "b" else 0.0
    chamfer = paired_difference(records, "a", "b", "chamfer_l1")
    assert chamfer["pairs"] == 6 and chamfer["mean"] == pytest.approx(-0.001)
    assert (chamfer["other_better"], chamfer["reference_better"]) == (6, 0)
    # the table: one row for B (A is the reference), the IoU pair count where it differs, n/a without IoU
    row = paired_table([("a", "A"), ("b", "B")], records, "a")[2:]
    assert len(row) == 1 and row[0].startswith("| B | 6 (5 with IoU) | -0.0010 [")
    for r in records:
        r["iou"] = None
    assert "| n/a | 0 / 0 |" in paired_table([("b", "B")], records, "a")[2]


def test_neurok_eval_end_to_end_on_a_tiny_dataset(tiny_dataset, tmp_path):
    checkpoint = tiny_checkpoint(tmp_path / "tiny.pt")
    displacement = tiny_checkpoint(tmp_path / "tiny_displacement.pt", "displacement")
    out, records = tmp_path / "docs" / "eval.md", tmp_path / "records.json"
    status = neurok_main(["eval", "--data", str(tiny_dataset), "--out", str(out), "--pairs-per-category", "1",
                          "--checkpoint", str(checkpoint), "--ablation-checkpoints", f"displacement={displacement}",
                          "--json", str(records), "--ik-starts", "2", "--ik-steps", "12", "2",
                          "--ik-prior-weight", "0.0001", "--ik-sample-sets", "3", "--ik-rigidity-weight", "0.5",
                          "--ik-keep-starts", "1", "--fits", "2", "--pca-pairs", "24",
                          "--pca-cache", str(tmp_path / "cache"), "--no-progress", "--device", "cpu"])
    assert status == 0
    text = out.read_text()
    # the identity row equals metrics_in_frame of the selected pair
    instance = load_instance(tiny_dataset / "toy_laptop_0002.npz")
    pair = pose_pair("toy_laptop_0002.npz", instance, seed=0)
    source, target = pose_vertices(instance, pair.pose_a), pose_vertices(instance, pair.pose_b)
    expected = metrics_in_frame((source, instance.faces), (target, instance.faces),
                                NormalisingTransform.from_vertices(source))
    row = next(line for line in text.splitlines() if line.startswith("| Baseline: identity"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "1" and cells[2] == fmt_l1(expected["chamfer_l1"])
    data = json.loads(records.read_text())
    identity = next(r for r in data["records"] if r["method"] == "identity")
    assert identity["chamfer_l1"] == pytest.approx(expected["chamfer_l1"], rel=1e-12)
    assert (identity["pose_a"], identity["pose_b"]) == (pair.pose_a, pair.pose_b) and pair.pose_a != pair.pose_b
    # every row ran (no_augment has no checkpoint: skipped with a note), with finite numbers
    methods = sorted({r["method"] for r in data["records"]})
    assert methods == ["displacement", "identity", "neurok", "no_subspace", "pca", "unanchored"]
    assert all(r["error"] is None and np.isfinite(r["chamfer_l1"]) for r in data["records"])
    assert next(r for r in data["records"] if r["method"] == "no_subspace")["k_q"] == 16  # tiny: K 4 x F 4
    for needle in ("| NeuROK |", "| Ablation: no active subspace", "| Ablation: displacement output",
                   "| Baseline: PCA", "skipped: no checkpoint given", "Paper Table 1", "## Protocol",
                   "| toy_laptop |", "`" + str(checkpoint) + "` | 2 |", "## Each row against NeuROK",
                   "| NeuROK, no-active-subspace and no-rest-anchoring ablations | `", "prior weight 0.0001",
                   "--prior-weight 0.0001", "An ensemble of 2 fits", "--fits 2", "--sample-sets 3",
                   "cycling through 3 seeded sets", "--rigidity-weight 0.5", "--keep-starts 1",
                   "after 10 of them only the 1 starts with the lowest objective",
                   "is fitted as rigid pieces (the objective adds 0.5 times"):
        assert needle in text, needle
    assert "no_augment" not in {r["method"] for r in data["records"]}
    # the PCA subspace was cached and a second run reads it back
    assert len(list((tmp_path / "cache").glob("pca_*.npz"))) == 1
    train = json.loads((tiny_dataset / "manifest.json").read_text())["splits"]["train"]
    subspace, _, cached = load_or_fit_subspace(tiny_dataset, train, PCAConfig(num_pairs=24), tmp_path / "cache")
    assert cached and subspace.dim == 16 and subspace.facts["config"]["num_pairs"] == 24


def test_partial_view_shows_the_methods_only_what_one_camera_sees(tiny_dataset, tmp_path):
    import trimesh

    name = "toy_laptop_0002.npz"
    instance = load_instance(tiny_dataset / name)
    pair = pose_pair(name, instance, seed=0)
    target, faces = pose_vertices(instance, pair.pose_b), np.asarray(instance.faces)
    camera = pair_camera(target, 0, name)
    np.testing.assert_array_equal(camera, pair_camera(target, 0, name))  # seeded
    seen = target_samples(target, faces, 0, name, 512, partial_view=True)
    every = target_samples(target, faces, 0, name, 512)
    assert seen.shape == every.shape == (512, 3)
    # each seen point is the first surface a ray from the camera meets (trimesh's own ray caster)
    directions = seen - camera
    hits, rays, _ = trimesh.Trimesh(target, faces, process=False).ray.intersects_location(
        np.repeat(camera[None], len(seen), 0), directions, multiple_hits=False)
    first = np.full(len(seen), np.inf)
    first[rays] = np.linalg.norm(hits - camera, axis=1)
    assert np.all(first >= np.linalg.norm(directions, axis=1) * (1 - 1e-4) - 1e-9)
    config = EvalConfig(data=tiny_dataset, pairs_per_category=1, checkpoint=tiny_checkpoint(tmp_path / "tiny.pt"),
                        ik=IKConfig(starts=2, q_steps=2, z_steps=1), pca=PCAConfig(num_pairs=24), pca_cache=None,
                        progress=False, partial_view=True, skip_rows=("no_subspace", "unanchored"))
    result = run_evaluation(config)
    assert {r["method"] for r in result.records} == {"neurok", "identity", "pca"}
    assert all(r["error"] is None and r["chamfer_l1"] is not None for r in result.records)
    assert "**Partial view** (`--partial-view`)" in result.markdown


def test_random_heading_turns_each_pair_about_the_up_axis(tiny_dataset, tmp_path):
    names = [f"laptop_{i:04d}.npz" for i in range(8)]
    turns = [pair_heading(name, seed=3) for name in names]
    for R in turns:
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(R) == pytest.approx(1.0)
        np.testing.assert_allclose(R[:, 2], [0.0, 0.0, 1.0], atol=1e-12)  # z (up) stays up
    np.testing.assert_array_equal(turns[0], pair_heading(names[0], seed=3))
    angles = {round(float(np.degrees(np.arctan2(R[1, 0], R[0, 0]))), 3) for R in turns}
    assert len(angles) == len(names)
    # the run scores the turned pair: the identity row is metrics_in_frame of SOURCE and TARGET turned
    config = EvalConfig(data=tiny_dataset, pairs_per_category=1, checkpoint=tiny_checkpoint(tmp_path / "tiny.pt"),
                        ik=IKConfig(starts=2, q_steps=2, z_steps=1), pca=PCAConfig(num_pairs=24), pca_cache=None,
                        progress=False, random_heading=True, skip_rows=("no_subspace", "unanchored"))
    result = run_evaluation(config)
    assert {r["method"] for r in result.records} == {"neurok", "identity", "pca"}
    assert "Ablation: no active subspace (k_q = k)\" skipped (--skip-rows)" in result.markdown
    assert "| NeuROK | `" in result.markdown  # the checkpoint table names no skipped row
    instance = load_instance(tiny_dataset / "toy_laptop_0002.npz")
    pair = pose_pair("toy_laptop_0002.npz", instance, seed=0)
    R = pair_heading("toy_laptop_0002.npz", seed=0)
    source, target = pose_vertices(instance, pair.pose_a) @ R.T, pose_vertices(instance, pair.pose_b) @ R.T
    expected = metrics_in_frame((source, instance.faces), (target, instance.faces),
                                NormalisingTransform.from_vertices(source))
    identity = next(r for r in result.records if r["method"] == "identity")
    assert identity["chamfer_l1"] == pytest.approx(expected["chamfer_l1"], rel=1e-12)
    assert "--random-heading" in result.markdown and "unknown heading" in result.markdown
    for rows in (("neurok",), ("no_such_row",)):  # NeuROK is every row's reference; names are checked
        with pytest.raises(NeurokInputError, match="cannot skip"):
            run_evaluation(replace(config, skip_rows=rows))


def test_neurok_eval_refuses_a_negative_prior_weight(tiny_dataset, tmp_path, capsys):
    out = tmp_path / "eval.md"
    status = neurok_main(["eval", "--data", str(tiny_dataset), "--out", str(out), "--ik-prior-weight", "-1",
                          "--no-progress", "--device", "cpu"])
    assert status == 2 and not out.exists()
    assert "--prior-weight must be a finite number >= 0" in capsys.readouterr().err
    status = neurok_main(["eval", "--data", str(tiny_dataset), "--out", str(out), "--ik-rigidity-weight", "nan",
                          "--no-progress", "--device", "cpu"])
    assert status == 2 and not out.exists()
    assert "--rigidity-weight must be a finite number >= 0" in capsys.readouterr().err
    status = neurok_main(["eval", "--data", str(tiny_dataset), "--out", str(out), "--ik-keep-starts", "-2",
                          "--no-progress", "--device", "cpu"])
    assert status == 2 and not out.exists()
    assert "--keep-starts must be >= 0" in capsys.readouterr().err


def test_reuse_records_takes_an_earlier_runs_records_after_a_spot_check(tiny_dataset, tmp_path, capsys):
    checkpoint = tiny_checkpoint(tmp_path / "tiny.pt")

    def run(json_name, *extra):
        return neurok_main(["eval", "--data", str(tiny_dataset), "--out", str(tmp_path / (json_name + ".md")),
                            "--split", "val", "--checkpoint", str(checkpoint), "--json", str(tmp_path / json_name),
                            "--ik-starts", "2", "--ik-steps", "2", "1", "--pca-pairs", "24", "--no-pca-cache",
                            "--no-progress", "--device", "cpu", *extra])

    assert run("first.json", "--skip-rows", "no_subspace", "unanchored", "pca") == 0
    first = json.loads((tmp_path / "first.json").read_text())["records"]
    files = sorted({r["file"] for r in first})
    assert len(files) == 2 and {r["method"] for r in first} == {"neurok", "identity"}
    # a second run adds a row; NeuROK's and identity's records of the second pair are the first run's
    assert run("second.json", "--skip-rows", "unanchored", "pca", "--reuse-records", str(tmp_path / "first.json")) == 0
    second = json.loads((tmp_path / "second.json").read_text())["records"]
    assert {r["method"] for r in second} == {"neurok", "no_subspace", "identity"} and len(second) == 6
    stored = {(r["method"], r["file"]): r for r in first}
    ordered = [r["file"] for r in second if r["method"] == "neurok"]
    for method in ("neurok", "identity"):
        spot, reused = (next(r for r in second if (r["method"], r["file"]) == (method, f)) for f in ordered)
        assert reused == stored[(method, ordered[1])]  # taken as stored, timings included
        for name in ("chamfer_l1", "chamfer_l2", "iou"):  # fitted again and reproduced
            assert spot[name] == pytest.approx(stored[(method, ordered[0])][name], abs=1e-6)
    text = (tmp_path / "second.json.md").read_text()
    assert "Reused (`--reuse-records`): 2 of 6 records" in text and "first.json" in text
    assert "NeuROK on `" + ordered[0] + "` (Chamfer-L1 within" in text
    assert "--reuse-records" in text.split("```")[1]  # the command shown
    # a stored record that the spot check does not reproduce: the run stops with one clear line
    data = json.loads((tmp_path / "first.json").read_text())
    next(r for r in data["records"] if r["method"] == "neurok" and r["file"] == ordered[0])["chamfer_l1"] += 0.01
    (tmp_path / "tampered.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert run("third.json", "--reuse-records", str(tmp_path / "tampered.json")) == 2
    err = capsys.readouterr().err
    assert f"row neurok, pair {ordered[0]}: fitted again here" in err and not (tmp_path / "third.json").exists()
    # another protocol (seed, IK steps) is refused before anything is fitted
    assert run("fourth.json", "--seed", "1", "--ik-steps", "3", "1", "--reuse-records",
               str(tmp_path / "first.json")) == 2
    assert "that run differs from this one in seed, ik" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    assert run("fifth.json", "--reuse-records", str(tmp_path / "bad.json")) == 2
    assert "not a `neurok eval --json` file" in capsys.readouterr().err
    data["records"][0] = {"method": "neurok"}
    (tmp_path / "broken.json").write_text(json.dumps(data))
    assert run("sixth.json", "--reuse-records", str(tmp_path / "broken.json")) == 2
    assert "holds a record that is not an eval record" in capsys.readouterr().err
    # the file keeps the settings it was fitted with, resolved, and is reused by them, not by its command
    stored = json.loads((tmp_path / "first.json").read_text())
    assert stored["config"]["ik"] == {**asdict(IKConfig()), "starts": 2, "q_steps": 2, "z_steps": 1}
    assert stored["config"]["seed"] == 0 and stored["config"]["pca"]["num_pairs"] == 24
    assert "--starts 2 --q-steps 2 --z-steps 1" in stored["command"]  # each option under its one name
    (tmp_path / "renamed.json").write_text(json.dumps({**stored, "command": "neurok eval --no-such-option"}))
    assert run("eighth.json", "--skip-rows", "no_subspace", "unanchored", "pca", "--reuse-records",
               str(tmp_path / "renamed.json")) == 0
    # older files hold the command alone, or with the IK settings: the command is parsed, older spellings too
    older = {key: value for key, value in stored.items() if key != "config"}
    older["command"] = stored["command"].replace("--starts 2 --q-steps 2 --z-steps 1", "--ik-starts 2 --ik-steps 2 1")
    (tmp_path / "older.json").write_text(json.dumps({**older, "ik": stored["config"]["ik"]}))
    assert run("ninth.json", "--skip-rows", "no_subspace", "unanchored", "pca", "--reuse-records",
               str(tmp_path / "older.json")) == 0
    legacy = {**older, "command": older["command"].replace("--ik-steps 2 1", "")}
    (tmp_path / "legacy.json").write_text(json.dumps(legacy))
    capsys.readouterr()
    assert run("seventh.json", "--reuse-records", str(tmp_path / "legacy.json")) == 2
    assert "that run differs from this one in ik" in capsys.readouterr().err


def test_reused_records_keep_the_ik_settings_they_were_fitted_with():
    from neurok_ros.cli.eval_command import IK_FIELDS_BEFORE, Z_STEPS_BEFORE_STORED_IK, stored_ik

    default = IKConfig()
    command = "neurok eval --data D --out O"
    # written before the files stored "ik": the command's settings, with the z steps of that time's
    # default, without rigid pieces and without piece registration
    assert default.z_steps != Z_STEPS_BEFORE_STORED_IK and default.rigid_pieces and default.piece_steps > 0
    before = replace(default, z_steps=Z_STEPS_BEFORE_STORED_IK, **IK_FIELDS_BEFORE)
    assert stored_ik({"command": command}, default, "f") == before
    named = replace(default, q_steps=3, z_steps=7)
    assert stored_ik({"command": command + " --ik-steps 3 7"}, named, "f") == replace(named, **IK_FIELDS_BEFORE)
    # written since: the stored settings, whatever the defaults are now
    assert stored_ik({"command": command, "ik": asdict(named)}, default, "f") == named
    # stored before the rigid pieces (2026-11-30): fitted without them
    older = {name: value for name, value in asdict(named).items() if name not in IK_FIELDS_BEFORE}
    assert stored_ik({"command": command, "ik": older}, default, "f") == replace(named, **IK_FIELDS_BEFORE)
    with pytest.raises(NeurokInputError, match="not this version's IKConfig fields"):
        stored_ik({"command": command, "ik": {"z_steps": 7}}, default, "f")
    with pytest.raises(NeurokInputError, match="do not parse"):
        stored_ik({"command": command, "ik": {**asdict(default), "trim": 2.0}}, default, "f")


def test_an_interrupted_eval_goes_on_from_its_saved_records(tiny_dataset, tmp_path, monkeypatch):
    import neurok_ros.evaluation.runner as runner

    records = tmp_path / "records.json"
    argv = ["eval", "--data", str(tiny_dataset), "--out", str(tmp_path / "eval.md"), "--split", "val",
            "--checkpoint", str(tiny_checkpoint(tmp_path / "tiny.pt")), "--json", str(records), "--ik-starts", "2",
            "--ik-steps", "2", "1", "--skip-rows", "no_subspace", "unanchored", "pca", "--no-progress",
            "--device", "cpu"]
    evaluate_pair, calls = runner.evaluate_pair, []

    def interrupted_after_one_pair(*args, **kwargs):
        calls.append(args[2])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return evaluate_pair(*args, **kwargs)

    monkeypatch.setattr(runner, "evaluate_pair", interrupted_after_one_pair)
    assert neurok_main(argv) == 130  # Ctrl-C: "neurok eval: interrupted"
    partial = tmp_path / "records.json.partial"
    saved = json.loads(partial.read_text())
    assert not records.exists()  # written only when the run ends
    assert saved["partial"] and {r["file"] for r in saved["records"]} == {calls[0]} and len(saved["records"]) == 2
    monkeypatch.setattr(runner, "evaluate_pair", evaluate_pair)
    assert neurok_main(argv + ["--reuse-records", str(partial)]) == 0
    done = json.loads(records.read_text())
    assert "partial" not in done and len(done["records"]) == 4 and set(done["summary"]) == {"neurok", "identity"}
    assert not partial.exists()
    assert "Reused (`--reuse-records`): 0 of 4 records" in (tmp_path / "eval.md").read_text()
