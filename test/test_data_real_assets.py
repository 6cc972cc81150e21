"""Real-asset conversion (MuJoCo XML / URDF -> articulated Instance) on small hand-written models.

Nothing is installed and nothing is downloaded: the pip sources are replaced by a local file.
"""
import json

import numpy as np
import pytest

from neurok_ros.cli import main
from neurok_ros.data.dataset_check import check_dataset
from neurok_ros.data.instance_format import load_instance, save_instance, validate_instance
from neurok_ros.data.real_assets import sources as src, write_real_assets
from neurok_ros.data.real_assets.mujoco_assets import DEFAULT_RANGES, convert_asset, prepared_xml
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry import dual_quaternion as dq

pytestmark = pytest.mark.unit

VISUAL = 'group="1" contype="0" conaffinity="0"'
CHEST = f"""<mujoco model="chest">
  <asset><texture name="wood" type="2d" builtin="checker" width="8" height="8"/>
         <texture name="wood" type="2d" builtin="flat" width="8" height="8"/>
         <material name="m" texture="wood"/></asset>
  <worldbody>
    <body name="base" pos="0 0 0.2">
      <geom type="box" size="0.3 0.2 0.2" material="m" {VISUAL}/>
      <geom type="box" size="0.3 0.2 0.2" rgba="1 0 0 0.3"/>
      <region name="libero_annotation"/>
      <body name="lid" pos="0 0.2 0.2">
        <joint name="lid_hinge" type="hinge" axis="-1 0 0" range="0 90"/>
        <geom type="box" pos="0 -0.2 0.01" size="0.3 0.2 0.01" {VISUAL}/>
      </body>
      <body name="drawer" pos="0 -0.2 -0.1">
        <joint name="drawer_slide" type="slide" axis="0 -1 0" range="0 0.3"/>
        <geom type="box" pos="0 0.15 0" size="0.25 0.15 0.05" {VISUAL}/>
        <body name="handle" pos="0 -0.02 0">
          <geom type="capsule" size="0.01 0.05" euler="0 90 0" {VISUAL}/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
INERTIAL = '<inertial><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
CART = f"""<robot name="cart">
  <link name="base">{INERTIAL}<visual><geometry><box size="0.4 0.2 0.1"/></geometry></visual>
    <collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision></link>
  <link name="wheel">{INERTIAL}<visual><origin rpy="1.5708 0 0"/>
    <geometry><cylinder radius="0.05" length="0.02"/></geometry></visual></link>
  <link name="mast">{INERTIAL}<visual><geometry><box size="0.05 0.05 0.2"/></geometry></visual></link>
  <joint name="axle" type="continuous"><parent link="base"/><child link="wheel"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="mast"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>
</robot>
"""
N = 8


def _rotation(axis, angle):
    k = np.asarray(axis, float)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


@pytest.fixture
def chest(tmp_path):
    path = tmp_path / "chest.xml"
    path.write_text(CHEST)
    return convert_asset(path, "test_chest", {"name": "real_assets", "file": "chest.xml"}, frames_per_joint=N)


def test_chest_parts_and_joints(chest):
    lid, drawer = chest.joints
    assert [j["name"] for j in chest.joints] == ["lid_hinge", "drawer_slide"]
    assert (lid["type"], drawer["type"]) == ("revolute", "prismatic")
    np.testing.assert_allclose(lid["axis"], [-1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(lid["pivot"], [0, 0.2, 0.4], atol=1e-9)
    np.testing.assert_allclose(drawer["axis"], [0, -1, 0], atol=1e-9)
    np.testing.assert_allclose(lid["range"], [0, np.pi / 2])  # MJCF angles default to degrees
    np.testing.assert_allclose(drawer["range"], [0, 0.3])
    assert (lid["parent_part"], lid["child_parts"]) == (0, [1])
    assert (drawer["parent_part"], drawer["child_parts"]) == (0, [2])
    assert set(np.unique(chest.part_ids)) == {0, 1, 2}
    # root: only the visual base box (8 corners), the collision twin is left out
    assert (chest.part_ids == 0).sum() == 8
    # the jointless handle (a capsule around y = -0.22, in front of everything else) joins the drawer
    handle = chest.rest_vertices[:, 1] < -0.205
    assert handle.sum() > 8 and np.all(chest.part_ids[handle] == 2)
    assert chest.generator["name"] == "real_assets" and chest.generator["params"]["part_names"][1:] == ["lid", "drawer"]


def test_chest_frames_follow_the_joints_rigidly(chest):
    T = chest.num_frames
    assert T == 1 + N * 2 + N and validate_instance(chest) == []
    q = chest.joint_values
    np.testing.assert_array_equal(q[0], 0)
    np.testing.assert_allclose(q[1:1 + N, 0], np.linspace(0, np.pi / 2, N), atol=1e-6)
    np.testing.assert_array_equal(q[1:1 + N, 1], 0)
    np.testing.assert_allclose(q[1 + N:1 + 2 * N, 1], np.linspace(0, 0.3, N), atol=1e-6)
    assert np.all(np.diff(chest.times) > 0)
    rest, lid, drawer, root = chest.rest_vertices, chest.part_ids == 1, chest.part_ids == 2, chest.part_ids == 0
    pivot = np.array(chest.joints[0]["pivot"])
    for t in range(T):
        expected_lid = (rest[lid] - pivot) @ _rotation([-1, 0, 0], q[t, 0]).T + pivot
        np.testing.assert_allclose(chest.frames[t, lid], expected_lid, atol=1e-5)
        np.testing.assert_allclose(chest.frames[t, drawer], rest[drawer] + q[t, 1] * np.array([0, -1, 0]), atol=1e-5)
        np.testing.assert_allclose(chest.frames[t, root], rest[root], atol=1e-6)
    reproduced = dq.apply(chest.vertex_dual_quaternions.astype(float), rest.astype(float))
    np.testing.assert_allclose(reproduced, chest.frames, atol=1e-5)
    # opened lid: its front edge (y = -0.2 at rest) swings up to z = 0.4 + 0.4 about -x
    assert chest.frames[N, lid][:, 2].max() > rest[lid][:, 2].max() + 0.3


def test_save_load_round_trip(chest, tmp_path):
    save_instance(tmp_path / "chest.npz", chest)
    back = load_instance(tmp_path / "chest.npz")
    assert back.joints == json.loads(json.dumps(chest.joints)) and back.generator == chest.generator
    for name in ("rest_vertices", "faces", "frames", "part_ids", "joint_values", "vertex_dual_quaternions"):
        np.testing.assert_array_equal(getattr(back, name), getattr(chest, name))


def test_prepared_xml_drops_textures_and_regions(tmp_path):
    path = tmp_path / "chest.xml"
    path.write_text(CHEST)
    text = prepared_xml(path)
    assert "<texture" not in text and "<region" not in text and 'inertiagrouprange="0 5"' in text
    assert str(tmp_path) in text  # meshdir made absolute


def test_urdf_continuous_and_prismatic(tmp_path):
    path = tmp_path / "cart.urdf"
    path.write_text(CART)
    inst = convert_asset(path, "test_cart", {"name": "real_assets"}, frames_per_joint=4, num_frames=20)
    assert inst.num_frames == 20 and validate_instance(inst) == []
    axle, lift = inst.joints
    assert (axle["type"], lift["type"]) == ("revolute", "prismatic")
    np.testing.assert_allclose(axle["range"], DEFAULT_RANGES["revolute"])
    np.testing.assert_allclose(axle["axis"], [0, 1, 0], atol=1e-9)
    np.testing.assert_allclose(axle["pivot"], [0.2, 0, 0], atol=1e-9)
    np.testing.assert_allclose(lift["axis"], [0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(lift["range"], [0, 0.2])
    assert (axle["child_parts"], lift["child_parts"]) == ([1], [2])
    mast = inst.part_ids == 2
    np.testing.assert_allclose(inst.frames[:, mast], inst.rest_vertices[mast] + inst.joint_values[:, 1, None, None]
                               * np.array([0, 0, 1]), atol=1e-5)
    wheel = inst.part_ids == 1
    rest = inst.rest_vertices[wheel] - np.array(axle["pivot"])
    np.testing.assert_allclose(np.linalg.norm(inst.frames[:, wheel] - np.array(axle["pivot"]), axis=-1),
                               np.broadcast_to(np.linalg.norm(rest, axis=-1), (20, wheel.sum())), atol=1e-5)


def test_write_real_assets_with_a_local_source(tmp_path, monkeypatch):
    asset = tmp_path / "chest.xml"
    asset.write_text(CHEST)
    (tmp_path / "broken.xml").write_text("<mujoco><worldbody><body><geom type='nope'/></body></worldbody></mujoco>")
    local = src.Source(pins=(f"numpy=={np.__version__}",), licence="test", assets={
        "libero_chest": str(asset), "libero_broken": str(tmp_path / "broken.xml")})
    monkeypatch.setattr(src, "SOURCES", {"libero": local})
    monkeypatch.setattr(src, "EXCLUDED", {"libero_faucet": "blind test", "pybullet_r2d2": "other source"})
    out = tmp_path / "real"
    assert main(["data", "real", "--out", str(out), "--frames-per-joint", "4"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["frames"] == 1 + 4 * 3
    (obj,) = manifest["objects"]
    assert obj["file"] == "libero_chest_0000.npz" and obj["parts"] == 3 and obj["licence"] == "test"
    assert [j["type"] for j in obj["joints"]] == ["revolute", "prismatic"]
    assert {s["category"] for s in manifest["skipped"]} == {"libero_faucet", "libero_broken"}
    assert check_dataset(out, progress=False)["problems"] == []
    assert load_instance(out / obj["file"]).generator["file"] == str(asset)


def test_bad_input(tmp_path):
    with pytest.raises(NeurokInputError, match="unknown sources"):
        write_real_assets(tmp_path, sources=["metaworld"])
    with pytest.raises(NeurokInputError, match="frames-per-joint"):
        write_real_assets(tmp_path, frames_per_joint=1)
    assert main(["data", "real", "--out", str(tmp_path), "--sources", "gymnasium_robotics"]) == 2
