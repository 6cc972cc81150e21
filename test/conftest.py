"""ROS 2 test environment: an isolated DDS domain per test run, one rclpy context per session.

Set at import, before any test module imports rclpy: ROS_DOMAIN_ID in 1..100 derived from the pid
(parallel runs on one machine rarely share a domain; topic names carry the pid as well),
discovery limited to this host, and Fast DDS on UDPv4 only so that tests do not depend on the
size or leftovers of /dev/shm (publisher and subscriber share one process, so Fast DDS delivers
intra-process and multi-MB messages need no transport tuning).
"""
import os

import pytest

os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")


@pytest.fixture(scope="session")
def ros_context():
    """rclpy initialised once for the session (default context), shut down at the end."""
    import rclpy
    started = not rclpy.ok()
    if started:
        rclpy.init()
    yield rclpy
    if started and rclpy.ok():
        rclpy.shutdown()


@pytest.fixture(scope="module")
def one_torch_thread():
    """Small models gain nothing from threads, and threads stall badly on a shared 2-core machine.
    Use with `pytestmark = pytest.mark.usefixtures("one_torch_thread")`."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def toy_dataset_dir(tmp_path_factory):
    """A small real 4D dataset (test/toy_kinematic_data.py): 2 train and 1 val instance of each toy
    category, 5 frames; one per test module."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from toy_kinematic_data import write_toy_dataset

    return write_toy_dataset(tmp_path_factory.mktemp("toy4d"), train=2, val=1, frames=5)
