"""ROS 2 layer, the only one importing rclpy and message types: thin conversions and the node."""
