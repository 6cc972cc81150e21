"""neurok_ros: Neural Object Kinematics for ROS 2.

Core library (no ROS): geometry, data, model, kinematics, dynamics, training.
ROS layer: neurok_ros.ros (thin message conversion and the node).
"""
__version__ = "0.1.0"
