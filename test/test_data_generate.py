"""`neurok data generate | check | split` end to end through the real command line.

Unit-level coverage lives elsewhere: file format and make_splits in test_data_format_and_splits.py,
per-category physics and generator determinism in test_data_articulated.py / test_data_deformable.py.
Here: the CLI wiring, worker processes, byte-identical datasets for a seed, and the split command.
"""
import json

import pytest

from neurok_ros.cli import main

pytestmark = pytest.mark.unit

CATEGORIES = ["laptop", "drawer", "soft_stem", "cloth_wind"]  # two articulated, one elastic, one cloth
KINDS = {"laptop": "articulated", "drawer": "articulated", "soft_stem": "elastic", "cloth_wind": "cloth"}


def _generate(out, seed, workers=2):
    argv = ["data", "generate", "--out", str(out), "--instances-per-category", "1", "--frames", "16",
            "--categories", *CATEGORIES, "--workers", str(workers), "--seed", str(seed)]
    assert main(argv) == 0


def _files(folder):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("datasets")
    for name, seed, workers in (("a", 0, 2), ("b", 0, 1), ("c", 1, 2)):
        _generate(root / name, seed, workers)
    return root


def test_generate_writes_one_file_per_instance_and_check_passes(datasets, capsys):
    folder = datasets / "a"
    assert set(_files(folder)) == {"manifest.json"} | {f"{c}_0000.npz" for c in CATEGORIES}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["frames"] == 16 and manifest["seed"] == 0
    assert manifest["categories"] == {c: {"kind": k, "count": 1} for c, k in KINDS.items()}
    assert "timing" not in manifest  # wall time would break byte-identical datasets
    capsys.readouterr()
    assert main(["data", "check", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "dataset OK" in out
    for category in CATEGORIES:
        assert category in out


def test_check_reports_a_damaged_dataset(datasets, tmp_path, capsys):
    for name, data in _files(datasets / "a").items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "soft_stem_0000.npz").write_bytes(b"truncated")
    assert main(["data", "check", str(tmp_path)]) == 1
    assert "soft_stem_0000.npz: not a readable NeuROK instance file" in capsys.readouterr().out


def test_same_seed_gives_byte_identical_files(datasets):
    """Folder b was written by one process, a by two workers: the bytes must not depend on that."""
    a, b = _files(datasets / "a"), _files(datasets / "b")
    assert set(a) == set(b)
    for name in a:
        assert a[name] == b[name], name


def test_different_seed_gives_different_files(datasets):
    a, c = _files(datasets / "a"), _files(datasets / "c")
    assert set(a) == set(c)
    for name in a:
        assert a[name] != c[name], name


def test_split_command_holds_out_a_category(datasets, tmp_path):
    folder = datasets / "a"
    manifest = json.loads((folder / "manifest.json").read_text())
    plain = tmp_path / "plain.json"
    assert main(["data", "split", str(folder), "--out", str(plain)]) == 0
    assert json.loads(plain.read_text()) == manifest["splits"]  # same seed and fractions as generate

    held = tmp_path / "held.json"
    assert main(["data", "split", str(folder), "--out", str(held), "--holdout-categories", "cloth_wind"]) == 0
    splits = json.loads(held.read_text())
    assert splits["test_holdout"] == ["cloth_wind_0000.npz"]
    for split in ("train", "val", "test"):
        assert not any(name.startswith("cloth_wind") for name in splits[split]), split
    kept = sorted(name for split in ("train", "val", "test") for name in splits[split])
    assert kept == sorted(f"{c}_0000.npz" for c in CATEGORIES if c != "cloth_wind")

    assert main(["data", "split", str(folder), "--out", str(tmp_path / "x.json"),
                 "--holdout-categories", "sofa"]) == 2
