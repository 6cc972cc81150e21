"""Reading scans: every format gives the same points, a surface is sampled, bad files fail clearly."""
import re

import numpy as np
import pytest

from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.mesh_io import save_mesh
from neurok_ros.geometry.point_cloud_io import MIN_POINTS, load_points

pytestmark = pytest.mark.unit


@pytest.fixture
def cloud():
    return np.random.default_rng(3).normal(size=(200, 3)) * [0.3, 0.2, 0.1] + [1.0, -2.0, 0.5]


def test_point_formats_give_the_file_points(tmp_path, cloud):
    import open3d as o3d
    import trimesh

    np.save(tmp_path / "scan.npy", np.column_stack([cloud, np.arange(len(cloud))]))  # a 4th column: ignored
    np.savetxt(tmp_path / "scan.xyz", np.column_stack([cloud, np.ones(len(cloud))]), header="x y z intensity")
    trimesh.PointCloud(cloud).export(tmp_path / "scan.ply")
    pcd = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(cloud))
    assert o3d.io.write_point_cloud(str(tmp_path / "scan.pcd"), pcd)
    # trimesh's PLY and open3d's PCD store float32
    for name, tolerance in (("scan.npy", 0), ("scan.xyz", 1e-15), ("scan.ply", 1e-6), ("scan.pcd", 1e-6)):
        points, dropped = load_points(tmp_path / name)
        assert dropped == 0 and points.shape == cloud.shape and points.dtype == np.float64
        assert np.abs(points - cloud).max() <= tolerance, name


def test_a_scanned_mesh_is_sampled_on_its_surface(tmp_path):
    # a unit square (two triangles) in the plane z = 2: every sample lies on it, spread over it
    V = np.array([[0, 0, 2], [1, 0, 2], [1, 1, 2], [0, 1, 2]], dtype=np.float64)
    F = np.array([[0, 1, 2], [0, 2, 3]])
    for suffix in ("ply", "stl"):
        save_mesh(tmp_path / f"square.{suffix}", V, F)
        points, dropped = load_points(tmp_path / f"square.{suffix}", mesh_samples=4000, seed=1)
        assert points.shape == (4000, 3) and dropped == 0
        assert np.allclose(points[:, 2], 2.0) and points[:, :2].min() >= 0 and points[:, :2].max() <= 1
        assert abs((points[:, 0] < 0.5).mean() - 0.5) < 0.05  # area-uniform, not at the 4 corners


def test_non_finite_points_are_dropped_and_counted(tmp_path, cloud):
    organised = cloud.copy()
    organised[::10] = np.nan  # no-return pixels of a depth camera
    organised[1, 2] = np.inf
    np.save(tmp_path / "scan.npy", organised)
    points, dropped = load_points(tmp_path / "scan.npy")
    assert dropped == 21 and len(points) == len(cloud) - 21 and np.isfinite(points).all()


@pytest.mark.parametrize("write, message", [
    (lambda p: np.save(p / "s.npy", np.zeros((50, 2))), "expected (M, 3) numeric points"),
    (lambda p: np.save(p / "s.npy", np.array([{"a": 1}] * 20, dtype=object)), "numeric .npy"),
    (lambda p: np.save(p / "s.npy", np.full((40, 3), np.nan)), "0 finite points"),
    (lambda p: np.savetxt(p / "s.xyz", np.zeros((MIN_POINTS - 1, 3))), f"a scan needs at least {MIN_POINTS}"),
    (lambda p: (p / "s.xyz").write_text("1 2 3\n4 five 6\n"), "as x y z columns"),
    (lambda p: (p / "s.las").write_bytes(b"LASF"), "unsupported scan format"),
])
def test_unusable_scans_fail_with_one_clear_line(tmp_path, write, message):
    write(tmp_path)
    path = next(tmp_path.iterdir())
    with pytest.raises(NeurokInputError, match="^" + re.escape(str(path))) as caught:
        load_points(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_missing_scan_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_points(tmp_path / "absent.pcd")
