"""The package as a ROS workspace installs it, and what the launch file and the RViz layout refer to.

colcon builds an ament_python package with `setup.py egg_info build install --prefix <install>
--single-version-externally-managed`; `ros2 run neurok_ros neurok_node` then looks for the executable
in <install>/lib/neurok_ros, and `ros2 launch neurok_ros neurok.launch.py` for the launch file and
its config files in <install>/share/neurok_ros. Neither ros2 launch nor RViz is installable here
(no launch / launch_ros / rviz2 packages in the registries), so the launch file is read, not run.
"""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "neurok_ros"


@pytest.fixture(scope="module")
def install_space(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("colcon")
    prefix = base / "install"
    subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(base), "build", "--build-base",
                    str(base / "build"), "install", "--prefix", str(prefix), "--single-version-externally-managed",
                    "--record", str(base / "record.txt")], cwd=ROOT, check=True, capture_output=True, timeout=300)
    return prefix


def _site_packages(prefix: Path) -> Path:
    return next(prefix.glob("lib/python3*/site-packages"))


def test_colcon_install_space_layout(install_space):
    for name in ("neurok_node", "neurok"):
        script = install_space / "lib" / PACKAGE / name
        assert script.is_file() and os.access(script, os.X_OK), f"{script} missing: ros2 run would not find it"
    share = install_space / "share" / PACKAGE
    assert (install_space / "share/ament_index/resource_index/packages" / PACKAGE).is_file()
    for relative in ("package.xml", "launch/neurok.launch.py", "config/neurok.yaml", "config/neurok.rviz",
                     "config/simulation.yaml", "config/dataset.yaml"):
        assert (share / relative).is_file(), relative
    assert (_site_packages(install_space) / PACKAGE / "assets" / "neurok_default.pt").is_file()


def test_installed_package_finds_its_own_config_and_runs(install_space, tmp_path):
    """From outside the checkout, the installed copy is imported and reads the install space's
    config (not the checkout's), and the installed `neurok` script runs."""
    env = dict(os.environ, PYTHONPATH=str(_site_packages(install_space)))
    probe = ("import neurok_ros, neurok_ros.config_files as c; print(neurok_ros.__file__); "
             "print(c.config_path('simulation.yaml')); print(c.config_path('neurok.yaml'))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, check=True, capture_output=True,
                         text=True, timeout=120).stdout.split()
    assert all(Path(line).resolve().is_relative_to(install_space.resolve()) for line in out), out
    assert Path(out[1]).parent == (install_space / "share" / PACKAGE / "config")
    shown = subprocess.run([str(install_space / "lib" / PACKAGE / "neurok"), "simulate", "--help"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "--dynamics-map" in shown.stdout, shown.stderr


def _launch_calls(path: Path) -> dict:
    """{callee name: [ast.Call, ...]} of the launch file."""
    calls: dict = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.setdefault(node.func.id, []).append(node)
    return calls


def _keyword(call: ast.Call, name: str):
    value = next((k.value for k in call.keywords if k.arg == name), None)
    return ast.literal_eval(value) if isinstance(value, ast.Constant) else value


def test_launch_file_refers_to_installed_files(install_space):
    launch = install_space / "share" / PACKAGE / "launch" / "neurok.launch.py"
    calls = _launch_calls(launch)
    nodes = {(_keyword(c, "package"), _keyword(c, "executable")) for c in calls["Node"]}
    assert (PACKAGE, "neurok_node") in nodes and ("rviz2", "rviz2") in nodes
    for package, executable in nodes:
        if package == PACKAGE:
            assert (install_space / "lib" / PACKAGE / executable).is_file(), executable
    joined = [[ast.literal_eval(e) for e in c.args[0].elts[1:]] for c in calls["PathJoinSubstitution"]]
    assert ["config", "neurok.yaml"] in joined and ["config", "neurok.rviz"] in joined
    for parts in joined:
        assert (install_space / "share" / PACKAGE).joinpath(*parts).is_file(), parts
    arguments = {ast.literal_eval(c.args[0]) for c in calls["DeclareLaunchArgument"]}
    assert {"params_file", "rviz", "rviz_config", "device", "log_level"} <= arguments


RVIZ_TYPES = {"rviz_default_plugins/MarkerArray": "visualization_msgs/msg/MarkerArray",
              "rviz_default_plugins/Marker": "visualization_msgs/msg/Marker",
              "rviz_default_plugins/PointCloud2": "sensor_msgs/msg/PointCloud2",
              "rviz_default_plugins/PublishPoint": "geometry_msgs/msg/PointStamped"}


def _rviz_topics(config: dict) -> list:
    """(plugin class, topic) of every display and tool with a topic."""
    found = []

    def walk(item):
        if isinstance(item, dict):
            topic = item.get("Topic")
            if isinstance(topic, dict) and "Value" in topic and item.get("Class") in RVIZ_TYPES:
                found.append((item["Class"], topic["Value"]))
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)

    walk(config)
    return found


class _IdleBackend:
    """Enough of a backend for the node to start; nothing is sent to it here."""

    info = {"checkpoint": "none"}

    def warm_up(self, settings):
        return 0.0


def _type_name(msg_type) -> str:
    module = msg_type.__module__.split(".")[0]
    return f"{module}/msg/{msg_type.__name__}"


def test_rviz_layout_shows_the_node_topics_with_their_types(ros_context):
    """Every topic of config/neurok.rviz is one the default neurok_node publishes or subscribes to,
    with the message type the RViz plugin expects, and the layout shows the trajectory, the markers
    and the mesh."""
    from neurok_ros.ros.neurok_node import NeurokNode

    node = NeurokNode(backend=_IdleBackend())
    try:
        endpoints = {(e.topic_name, _type_name(e.msg_type)) for e in (*node.publishers, *node.subscriptions)}
    finally:
        node.destroy_node()
    topics = _rviz_topics(yaml.safe_load((ROOT / "config" / "neurok.rviz").read_text()))
    assert {t for _, t in topics} >= {"/neurok_node/trajectory", "/neurok_node/markers", "/neurok_node/mesh"}
    for plugin, topic in topics:
        assert (topic, RVIZ_TYPES[plugin]) in endpoints, (plugin, topic, sorted(endpoints))
