"""ament_python package: builds with colcon in a ROS 2 workspace and installs with pip in a virtualenv."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "neurok_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={PACKAGE: ["assets/*", "assets/**/*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.rviz")),
        (f"share/{PACKAGE}/config/model", glob("config/model/*.yaml")),
        (f"share/{PACKAGE}/msg", glob("msg/*.md")),
    ],
    # Core library dependencies. In a ROS workspace rclpy and the message packages come from ROS
    # (package.xml); in a virtualenv `make setup` installs the pinned set from requirements.txt.
    install_requires=[
        "setuptools",
        "torch==2.13.0",
        "numpy",
        "scipy",
        "trimesh",
        "libigl",
        "torchdiffeq",
        "mujoco",
        "tqdm",
        "matplotlib",
        "imageio",
        "PyYAML",
    ],
    extras_require={
        "ros": [
            "ros-rclpy[fastrtps]",
            "ros-std-msgs",
            "ros-geometry-msgs",
            "ros-sensor-msgs",
            "ros-trajectory-msgs",
            "ros-visualization-msgs",
            "ros-diagnostic-msgs",
        ],
    },
    zip_safe=True,
    maintainer="neurok_ros developers",
    maintainer_email="neurok@example.org",
    description="NeuROK: learned latent-space Lagrangian dynamics of object meshes, with a ROS 2 node.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "neurok = neurok_ros.cli:main",
            "neurok_node = neurok_ros.ros.neurok_node:main",
        ],
    },
)
