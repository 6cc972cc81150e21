"""QoS profiles of the neurok node's topics (conventions: msg/README.md)."""
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# in ~/mesh: the object mesh is state, not a stream: a late subscriber still gets the last one.
MESH_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)

# in ~/action: latest-only; an action that arrives while one is queued replaces it.
ACTION_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# in ~/clicked_point: what RViz's "Publish Point" tool offers (reliable, volatile).
CLICKED_POINT_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# in ~/observation: a camera stream. BEST_EFFORT matches both best-effort (sensor drivers) and reliable
# publishers; only the newest cloud matters.
OBSERVATION_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.BEST_EFFORT,
    durability=DurabilityPolicy.VOLATILE,
)
# ~/observation with `observation_reliable: true`: every cloud delivered (a reliable recorder or bag)
OBSERVATION_RELIABLE_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# out ~/trajectory: the latest prediction, kept for planners that subscribe after it was published.
# A VOLATILE subscriber matches it too.
TRAJECTORY_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)

# out ~/markers: RViz playback, one frame per timer tick; RViz's Marker display subscribes
# reliable + volatile by default.
MARKERS_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# out /diagnostics: the usual diagnostic_updater profile.
DIAGNOSTICS_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# out ~/trajectory_mesh: the mesh whose vertices are the columns of ~/trajectory (state, like ~/mesh).
TRAJECTORY_MESH_QOS = MESH_QOS

# out ~/object_description: the object's URDF, state like robot_description: a late subscriber gets it.
DESCRIPTION_QOS = MESH_QOS

# out ~/joint_trajectory: the latest prediction in joints, kept like ~/trajectory.
JOINT_TRAJECTORY_QOS = TRAJECTORY_QOS

# out ~/joint_states: playback for RViz's RobotModel (through robot_state_publisher), the usual
# joint_states profile.
JOINT_STATES_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# out /tf: the object's link frames (neurok_ros.ros.tf_messages), tf2_ros's dynamic broadcaster profile
# (DynamicBroadcasterQoS), which RViz and tf2 listeners subscribe with.
TF_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=100,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# /tf_static: tf2_ros's static broadcaster profile (StaticBroadcasterQoS), for transforms that never change.
TF_STATIC_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
