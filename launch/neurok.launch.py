"""Start neurok_node with its parameters and, on request, RViz with config/neurok.rviz.

    ros2 launch neurok_ros neurok.launch.py
    ros2 launch neurok_ros neurok.launch.py rviz:=true params_file:=/path/to/my.yaml
    ros2 launch neurok_ros neurok.launch.py device:=cuda:0

Arguments: params_file (default: the installed config/neurok.yaml), rviz (false), rviz_config
(the installed config/neurok.rviz), device (auto; overrides the file), log_level (info).
The params file's key must match the node: `neurok_node:` here (no namespace). The RViz layout
subscribes to /neurok_node/...; keep the node's name and namespace when you use it.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("neurok_ros")
    params_file = LaunchConfiguration("params_file")
    rviz = LaunchConfiguration("rviz")
    rviz_config = LaunchConfiguration("rviz_config")
    device = LaunchConfiguration("device")
    log_level = LaunchConfiguration("log_level")

    return LaunchDescription([
        DeclareLaunchArgument("params_file", default_value=PathJoinSubstitution([share, "config", "neurok.yaml"]),
                              description="ROS 2 params file for neurok_node"),
        DeclareLaunchArgument("rviz", default_value="false", description="also start RViz (true/false)"),
        DeclareLaunchArgument("rviz_config", default_value=PathJoinSubstitution([share, "config", "neurok.rviz"]),
                              description="RViz layout"),
        DeclareLaunchArgument("device", default_value="auto", description="torch device: auto, cpu, cuda, cuda:N"),
        DeclareLaunchArgument("log_level", default_value="info", description="node log level"),
        Node(
            package="neurok_ros",
            executable="neurok_node",
            name="neurok_node",
            output="screen",
            emulate_tty=True,
            parameters=[params_file, {"device": device}],
            ros_arguments=["--log-level", log_level],
        ),
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            output="screen",
            arguments=["-d", rviz_config],
            condition=IfCondition(rviz),
        ),
    ])
