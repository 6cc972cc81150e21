"""neurok_node as a managed node, driven through the standard lifecycle services (lifecycle_msgs
ChangeState and GetState) from a second real rclpy node: configure loads the shipped model,
activate opens the topics, deactivate closes them (an action then yields no trajectory), cleanup
releases the model, shutdown finalizes; /diagnostics reports every state. autostart false leaves the
node unconfigured; a missing checkpoint fails configure without taking the node down.
"""
import gc
import itertools
import os
import weakref

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import PointCloud2
from test_ros_node import FAST, FakeBackend, ProbedNode, _small_mesh, _stamp, _top_contact
from trajectory_msgs.msg import MultiDOFJointTrajectory
from visualization_msgs.msg import Marker

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import NeurokInputError
from neurok_ros.ros.contact_action import conditions_to_trajectory
from neurok_ros.ros.diagnostics import find_status, status_values
from neurok_ros.ros.mesh_marker import mesh_to_marker
from neurok_ros.ros.neurok_node import NeurokNode
from neurok_ros.ros.qos import ACTION_QOS, DIAGNOSTICS_QOS, MESH_QOS, TRAJECTORY_QOS

pytestmark = [pytest.mark.ros, pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]

_namespaces = itertools.count()
# the node loads the shipped model itself (no backend given), on the CPU, one thread
MANAGED = {**FAST, "autostart": False, "device": "cpu", "threads": 1}


class Managed(ProbedNode):
    """A neurok_node and a probe node (lifecycle service clients, a mesh and an action publisher, a
    trajectory and a /diagnostics subscriber) in one SingleThreadedExecutor."""

    def __init__(self, backend=None, **overrides):
        ns = f"/lc{os.getpid()}_{next(_namespaces)}"
        self.node = NeurokNode(backend=backend, namespace=ns,
                               parameter_overrides=[Parameter(k, value=v) for k, v in {**MANAGED, **overrides}.items()])
        self.fqn = self.node.get_fully_qualified_name()
        self.probe = Node("lifecycle_probe", namespace=ns)
        self.change_state = self.probe.create_client(ChangeState, f"{self.fqn}/change_state")
        self.get_state = self.probe.create_client(GetState, f"{self.fqn}/get_state")
        self.mesh_pub = self.probe.create_publisher(Marker, f"{self.fqn}/mesh", MESH_QOS)
        self.action_pub = self.probe.create_publisher(MultiDOFJointTrajectory, f"{self.fqn}/action", ACTION_QOS)
        self.clouds, self.diagnostics = [], []
        self.probe.create_subscription(PointCloud2, f"{self.fqn}/trajectory", self.clouds.append, TRAJECTORY_QOS)
        self.probe.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, DIAGNOSTICS_QOS)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.executor.add_node(self.probe)
        for client in (self.change_state, self.get_state):
            self.spin_until(client.service_is_ready, 10, f"the service {client.srv_name}")

    def _on_diagnostics(self, msg):
        status = find_status(msg, f"{self.fqn}: state")
        if status is not None:
            self.diagnostics.append(status)

    def call(self, client, request, timeout=60):
        future = client.call_async(request)
        self.spin_until(future.done, timeout, f"{client.srv_name}")
        return future.result()

    def transition(self, transition_id: int) -> bool:
        self.diagnostics.clear()  # what reported() finds from now on answers this transition
        return self.call(self.change_state, ChangeState.Request(transition=Transition(id=transition_id))).success

    def state(self) -> str:
        return self.call(self.get_state, GetState.Request()).current_state.label

    def reported(self, state: str):
        """The /diagnostics state status once it says `state`."""
        return self.spin_until(lambda: next((s for s in reversed(self.diagnostics)
                                             if status_values(s)["state"] == state), None), 10, f"'{state}'")

    def topics(self) -> set:
        """The node's own topics (~/...) with a publisher or subscription now."""
        prefix = f"{self.fqn}/"
        names = {e.topic_name for e in (*self.node.publishers, *self.node.subscriptions)}
        return {n[len(prefix):] for n in names if n.startswith(prefix)} - {"transition_event"}

    def send_action(self, V, velocity=(0.0, 0.0, -0.3)):
        stamp = _stamp()
        conditions = ContactConditions(_top_contact(V)[None], np.asarray([velocity], float))
        self.action_pub.publish(conditions_to_trajectory(conditions, "object", stamp))
        return stamp

    def trajectory_for(self, stamp, timeout=60):
        return self.spin_until(lambda: next((c for c in self.clouds if c.header.stamp == stamp), None), timeout,
                               "the trajectory")


def test_transitions_through_the_lifecycle_services(ros_context):
    """unconfigured -> configure (the model loads) -> activate (a mesh and an action give a
    trajectory) -> deactivate (no topics: an action gives nothing) -> activate (the same mesh, an
    action gives a trajectory again) -> deactivate -> cleanup (the model is freed) -> shutdown."""
    V, F = _small_mesh()
    m = Managed()
    try:
        assert m.state() == "unconfigured" and m.node.backend is None and not m.topics()
        assert m.reported("unconfigured").level == DiagnosticStatus.WARN
        assert m.transition(Transition.TRANSITION_CONFIGURE)
        assert m.state() == "inactive" and m.node.backend is not None and not m.topics()
        model = weakref.ref(m.node.backend.model)
        assert m.reported("inactive").level == DiagnosticStatus.WARN
        assert m.node.status.value("model_device") == "cpu"

        assert m.transition(Transition.TRANSITION_ACTIVATE)
        assert m.state() == "active" and {"mesh", "action", "trajectory", "markers"} <= m.topics()
        marker = mesh_to_marker(V, F, "object")
        marker.header.stamp = _stamp()
        m.mesh_pub.publish(marker)
        m.spin_until(lambda: m.node.mesh is not None, 60, "the mesh to be encoded")
        assert m.trajectory_for(m.send_action(V)).width == len(V)

        assert m.transition(Transition.TRANSITION_DEACTIVATE)
        assert m.state() == "inactive" and not m.topics()
        assert m.reported("inactive").level == DiagnosticStatus.WARN
        unanswered = m.send_action(V)
        m.spin_for(1.0)
        assert not [c for c in m.clouds if c.header.stamp == unanswered]

        assert m.transition(Transition.TRANSITION_ACTIVATE)
        m.spin_until(lambda: m.action_pub.get_subscription_count(), 10, "the action subscription")
        assert m.node.mesh is not None  # the model and the mesh in use stayed while inactive
        assert m.trajectory_for(m.send_action(V, (0.0, 0.0, -0.2))).width == len(V)
        assert not [c for c in m.clouds if c.header.stamp == unanswered]

        assert m.transition(Transition.TRANSITION_DEACTIVATE)
        assert m.transition(Transition.TRANSITION_CLEANUP)
        assert m.state() == "unconfigured" and m.node.backend is None and m.node.mesh is None
        gc.collect()
        assert model() is None  # nothing holds the model any more
        assert m.reported("unconfigured").level == DiagnosticStatus.WARN

        assert m.transition(Transition.TRANSITION_UNCONFIGURED_SHUTDOWN)
        assert m.state() == "finalized" and not m.topics()
        assert m.reported("finalized").level == DiagnosticStatus.WARN
        assert not m.transition(Transition.TRANSITION_CONFIGURE)  # finalized is final
    finally:
        m.close()


def test_shutdown_from_active_closes_everything(ros_context):
    m = Managed(backend=FakeBackend())
    try:
        assert m.transition(Transition.TRANSITION_CONFIGURE) and m.transition(Transition.TRANSITION_ACTIVATE)
        assert "action" in m.topics()
        assert m.transition(Transition.TRANSITION_ACTIVE_SHUTDOWN)
        assert m.state() == "finalized" and not m.topics() and m.node.backend is None
    finally:
        m.close()


def test_a_missing_checkpoint_fails_configure_and_the_node_lives_on(ros_context, tmp_path):
    missing = str(tmp_path / "missing.pt")
    m = Managed(checkpoint=missing)
    try:
        assert not m.transition(Transition.TRANSITION_CONFIGURE)
        assert m.state() == "unconfigured" and m.node.backend is None and not m.topics()
        status = m.reported("error")
        assert status.level == DiagnosticStatus.ERROR and "model could not be loaded" in status.message
        assert missing in status.message
        assert not m.transition(Transition.TRANSITION_CONFIGURE)  # still answers, still refuses
    finally:
        m.close()
    # autostart (the default): the node does not start, as neurok_node / neurok serve always did
    with pytest.raises(NeurokInputError, match="no such checkpoint"):
        NeurokNode(namespace=f"/lc{os.getpid()}_x", parameter_overrides=[Parameter("checkpoint", value=missing)])


def test_autostart_configures_and_activates(ros_context):
    m = Managed(backend=FakeBackend(), autostart=True)
    try:
        assert m.state() == "active" and {"mesh", "action", "trajectory"} <= m.topics()
        assert m.node.backend is not None
    finally:
        m.close()

