"""`neurok metrics` end to end, in a subprocess like a user would run it."""
import json
import subprocess
import sys

import numpy as np
import pytest
import trimesh

from neurok_ros.geometry.mesh_io import save_mesh

pytestmark = pytest.mark.unit

CUBE = trimesh.creation.box(extents=(2.0, 2.0, 2.0))


def _neurok(*args):
    return subprocess.run([sys.executable, "-m", "neurok_ros", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def cube_files(tmp_path):
    source, target = tmp_path / "source.ply", tmp_path / "target.stl"
    save_mesh(source, CUBE.vertices, CUBE.faces)
    save_mesh(target, np.asarray(CUBE.vertices) + [1.0, 0.0, 0.0], CUBE.faces)  # half a side
    return source, target


def test_metrics_json(cube_files):
    source, target = cube_files
    result = _neurok("metrics", str(source), str(target), "--json", "--samples", "30000",
                     "--seed", "4")
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert set(values) == {"chamfer_l1", "chamfer_l2", "iou"}
    assert values["iou"] == pytest.approx(1.0 / 3.0, abs=0.03)
    d = 0.5  # the shift in units of the source's longest side
    assert values["chamfer_l1"] == pytest.approx(d / 3 + 2 * d**3 / 9, rel=0.05)
    assert 0 < values["chamfer_l2"] < values["chamfer_l1"]


def test_metrics_json_of_a_flat_source_has_a_null_iou(tmp_path, cube_files):
    # a flat square sheet encloses no volume: IoU against it is undefined, printed as JSON null
    _, cube = cube_files
    sheet = tmp_path / "sheet.ply"
    corners = np.array([[-1.0, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1]])  # the cube's bottom face
    save_mesh(sheet, corners, np.array([[0, 1, 2], [0, 2, 3]]))
    result = _neurok("metrics", str(sheet), str(cube), "--json", "--samples", "20000")
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["iou"] is None and values["chamfer_l1"] > 0


def test_metrics_readable_line(cube_files):
    source, _ = cube_files
    result = _neurok("metrics", str(source), str(source), "--samples", "20000")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and "chamfer_l1" in lines[0] and "iou 1.0000" in lines[0]


def test_bad_files_give_one_line_errors(tmp_path, cube_files):
    source, _ = cube_files
    garbage = tmp_path / "garbage.ply"
    garbage.write_bytes(b"this is not a mesh at all")
    for target in (garbage, tmp_path / "missing.obj"):
        result = _neurok("metrics", str(source), str(target), "--json")
        assert result.returncode != 0
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert target.name in lines[0] and "error" in lines[0]


def test_json_line_writes_strict_json_at_any_depth():
    # `neurok simulate --json` nests its timings; `neurok request --json` reports NaN for a timing the
    # node did not send: both must stay parseable by strict JSON readers.
    from neurok_ros.strict_json import json_line

    line = json_line({"iou": float("nan"), "seconds": {"wall": 1.5, "encode": float("inf")},
                      "energy": [np.float32(2.0), np.float64(np.nan)], "frames": np.int64(3)})
    assert json.loads(line, parse_constant=lambda token: pytest.fail(f"non-standard token {token}")) == {
        "iou": None, "seconds": {"wall": 1.5, "encode": None}, "energy": [2.0, None], "frames": 3}
