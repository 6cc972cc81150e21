"""neurok_node: meshes and contact actions in, predicted vertex trajectories out (docs/architecture.md §10,
msg/README.md). An observed point cloud of the object (~/observation) sets the state that the next
actions start from: the received mesh's learned space is fitted to it (kinematics/scan_fit.py).

Thin: callbacks convert messages and hand jobs to ONE worker thread (latest-only, see
prediction_worker.py); the worker encodes meshes (cached by a hash of vertices + faces) and calls
the backend's one prediction call; outputs go back out as messages. Bad inputs never raise out of
a callback: each is refused with a DiagnosticStatus ERROR naming the problem, and the last good
mesh stays in use.

A managed (lifecycle) node: configure loads the model, activate opens the topics, deactivate
closes them, cleanup releases the model (msg/README.md, "Lifecycle"). With `autostart` (default)
it configures and activates itself at start.

While active it also serves the PredictMotion action (~/predict_motion, neurok_interfaces): a goal
carries its own mesh and contacts; the executor thread that runs it hands it to the same worker
thread (kind "goal") and waits, so all model work stays on that one thread, with the encoding
cache; cancel requests stop the simulation at its next step (should_stop). Spin the node with
node_executor() (a MultiThreadedExecutor), so that cancel requests and /diagnostics are served
while a goal waits.

    neurok_node --ros-args --params-file config/neurok.yaml
"""
from __future__ import annotations

import gc
import json
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.timer import Timer
from sensor_msgs.msg import JointState, PointCloud2
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.errors import Cancelled, MeshError, NeurokInputError
from neurok_ros.ros.contact_action import trajectory_to_conditions
from neurok_ros.ros.diagnostics import NodeStatus, energy_text, stamp_text
from neurok_ros.ros.joint_messages import JointStatePlayback, joint_trajectory
from neurok_ros.ros.mesh_marker import marker_to_mesh, mesh_to_marker
from neurok_ros.ros.node_parameters import NODE_NAME, SPEC_BY_NAME, check_value, declare_parameters, read_settings
from neurok_ros.ros.observation_cloud import cloud_to_points
from neurok_ros.ros.playback_markers import MarkerPlayback, contact_markers
from neurok_ros.ros.prediction_worker import EncodingCache, LatestOnlyWorker, mesh_key
from neurok_ros.ros.qos import (
    ACTION_QOS,
    CLICKED_POINT_QOS,
    DESCRIPTION_QOS,
    DIAGNOSTICS_QOS,
    JOINT_STATES_QOS,
    JOINT_TRAJECTORY_QOS,
    MARKERS_QOS,
    MESH_QOS,
    OBSERVATION_QOS,
    OBSERVATION_RELIABLE_QOS,
    TF_QOS,
    TRAJECTORY_MESH_QOS,
    TRAJECTORY_QOS,
)
from neurok_ros.ros.trajectory_cloud import frames_to_cloud
from neurok_ros.simulation.surface_index import SurfaceIndex

PLAYBACK_TICK_S = 0.02
WORKER_STOP_S = 30.0  # how long closing the topics waits for the running job
GOAL_STOP_S = 5.0  # how long closing the topics waits for the stopped goals to reach their terminal state
GOAL_POLL_S = 0.05  # a goal waiting for the worker looks for a cancel this often
FEEDBACK_PERIOD_S = 0.1  # PredictMotion feedback during the simulation, at most this often
# A goal holds an executor thread while it waits for the worker: at most two do (the running goal and
# the one waiting; a newer goal supersedes the waiting one), the others serve the topics, /diagnostics,
# the lifecycle services and cancel requests.
EXECUTOR_THREADS = 4


@dataclass
class MeshJob:
    marker: Marker
    received: float


@dataclass
class ActionJob:
    conditions: ContactConditions
    stamp: Time          # stamp the trajectory will carry
    input_stamp: str     # the input's own header.stamp, as reported on /diagnostics
    topic: str
    received: float
    frame_id: str = ""   # the input's header.frame_id ("" = the mesh frame)


@dataclass
class ObservationJob:
    points: np.ndarray   # (M, 3) float64, finite, mesh frame
    dropped: int         # non-finite points left out
    input_stamp: str
    received: float
    frame_id: str = ""   # the cloud's header.frame_id ("" = the mesh frame)


@dataclass(eq=False)  # hashed by identity (the node's set of running goals)
class GoalJob:
    """A PredictMotion goal handed to the worker. The executor thread running the goal waits on
    `done`, then returns `result` (a PredictMotion.Result) or raises `error` (the goal aborts).
    feedback: predict_motion_action.GoalFeedback; stop_reason: set when the node stops the goal."""

    goal: object
    overrides: dict
    feedback: object
    received: float
    done: threading.Event = field(default_factory=threading.Event)
    result: object = None
    error: Optional[Exception] = None
    stop_reason: str = ""

    def should_stop(self) -> bool:
        """Asked at every simulation step: the client asked to cancel, or the node stops the goal."""
        return bool(self.stop_reason) or self.feedback.cancel_requested

    def finish(self, result=None, error: Optional[Exception] = None) -> None:
        if not self.done.is_set():
            self.result, self.error = result, error
            self.done.set()


@dataclass
class CurrentMesh:
    """The mesh in use: vertices (n, 3) / faces (m, 3) after decoding (and decimation), in frame_id;
    after an ~/observation, the fitted shape, with `received` the mesh it was fitted from."""

    vertices: np.ndarray
    faces: np.ndarray
    frame_id: str
    key: str
    instance: object
    surface: SurfaceIndex
    encode_s: float
    from_cache: bool
    input_vertices: int
    input_stamp: str
    predictions: int = 0
    received: Optional["CurrentMesh"] = None

    @property
    def size(self) -> float:
        return self.surface.diagonal


def joint_text(joints) -> str:
    """'name value, ...' of a JointPoseFit (rad or m), '' for None."""
    return "" if joints is None else ", ".join(f"{k} {v:.4g}" for k, v in joints.joint_values().items())


def _is_zero(stamp: Time) -> bool:
    return stamp.sec == 0 and stamp.nanosec == 0


class NeurokNode(LifecycleNode):
    """The NeuROK prediction node, a managed (lifecycle) node.

    configure loads the model and warms it up; activate opens the topics and starts the worker;
    deactivate closes them (no message flows while inactive); cleanup releases the model; shutdown
    does both. /diagnostics is published in every state. With the `autostart` parameter (default
    true) the constructor configures and activates the node, raising when the model cannot load.

    backend: an object with encode(V, F), predict(instance, conditions, settings) -> MotionResult
    and warm_up(settings) (default: NeurokBackend.load with the checkpoint/device parameters at
    each configure; a given backend is the caller's and is taken again at each configure).
    defaults: parameter defaults (default: config/neurok.yaml). Other arguments go to rclpy's Node.
    """

    def __init__(self, *, backend=None, node_name: str = NODE_NAME, namespace: Optional[str] = None,
                 context=None, cli_args=None, parameter_overrides=None, defaults: Optional[dict] = None):
        super().__init__(node_name, namespace=namespace, context=context, cli_args=cli_args,
                         parameter_overrides=parameter_overrides)
        declare_parameters(self, defaults)
        settings = read_settings(self)
        self._given_backend = backend
        self.backend = None
        self._cache: Optional[EncodingCache] = None
        self._configure_error: Optional[Exception] = None
        self._worker: Optional[LatestOnlyWorker] = None
        self._inputs: list = []    # subscriptions and timers, only while active
        self._outputs: list = []   # publishers, only while active
        self._action_server = None  # ~/predict_motion, for the node's whole life; goals only while active
        self._goals: set = set()    # GoalJobs between their start and their result
        self._goals_lock = threading.Lock()
        self._goals_open = False    # whether goals may be handed to the worker
        self.goal_counts = {"succeeded": 0, "canceled": 0, "aborted": 0}  # PredictMotion goals run by the worker
        self._mesh: Optional[CurrentMesh] = None
        self.predictions = 0
        self.status = NodeStatus(self.get_fully_qualified_name())
        self.status.set_state("unconfigured", "configure to load the model")
        # /diagnostics in every state, for the node's whole life
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DIAGNOSTICS_QOS)
        self._diagnostics_timer = self.create_timer(settings.diagnostics_period, self.publish_diagnostics)
        # the action server stays while the node lives, so a goal ended by deactivate still gets its
        # result; it refuses goals unless the node is active
        self._action_server = self._serve_predict_motion()
        self.publish_diagnostics()
        if settings.autostart:
            self._autostart()

    def _autostart(self) -> None:
        """configure, then activate; on failure the node is destroyed and the error raised (so
        neurok_node and `neurok serve` end with it, as they always did)."""
        if self.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            error = self._configure_error or RuntimeError("neurok_node could not be configured")
        elif self.trigger_activate() != TransitionCallbackReturn.SUCCESS:
            error = RuntimeError("neurok_node could not be activated")
        else:
            return
        self.destroy_node()
        raise error

    # ---------------------------------------------------------------- lifecycle transitions
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Load the model and warm it up; FAILURE (logged, on /diagnostics) when it cannot load."""
        settings = read_settings(self)
        self._configure_error = None
        try:
            backend = self._given_backend if self._given_backend is not None else self._load_backend(settings)
            info = dict(getattr(backend, "info", {}) or {})
            self.status.update(**{f"model_{k}": v for k, v in info.items()})
            if settings.warmup:
                self.status.set_state("loading", "warming up")
                self.publish_diagnostics()
                self.status.update(warmup_s=backend.warm_up(settings))
        except Exception as exc:
            reason = f"model could not be loaded: {type(exc).__name__}: {exc}"
            self._configure_error = exc
            self.status.set_state("error", reason)
            self.publish_diagnostics()
            self.get_logger().error(f"configure failed: {reason}")
            return TransitionCallbackReturn.FAILURE
        self.backend = backend
        self._cache = EncodingCache(settings.cache_size)
        self.status.set_state("inactive", "activate to open the topics")
        self.publish_diagnostics()
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Open the topics and start the worker."""
        self._open_topics()
        self.status.set_state("ready", "" if self._mesh is not None else "waiting for a mesh")
        self.publish_diagnostics()
        self.get_logger().info(f"ready: {self.resolve_topic_name('~/mesh')}, {self.resolve_topic_name('~/action')}")
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the topics (the running job finishes first); the model and the mesh in use stay."""
        self._close_topics()
        self.status.set_state("inactive", "activate to open the topics")
        self.publish_diagnostics()
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Release the model, its encodings and the mesh in use."""
        self._release_model()
        self.status.set_state("unconfigured", "configure to load the model")
        self.publish_diagnostics()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """From any primary state: close the topics, release the model, publish a last /diagnostics."""
        self._close_topics()
        self._release_model()
        self.status.set_state("finalized")
        self.publish_diagnostics()
        self.destroy_timer(self._diagnostics_timer)
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        """A transition raised: back to unconfigured, with the topics closed and the model released."""
        self.get_logger().error(f"a transition from '{state.label}' raised; the node is unconfigured again")
        self._close_topics()
        self._release_model()
        self.status.set_state("error", f"a transition from '{state.label}' failed; configure again")
        self.publish_diagnostics()
        return TransitionCallbackReturn.SUCCESS

    # ---------------------------------------------------------------- set-up and tear-down
    def _load_backend(self, settings):
        from neurok_ros.ros.prediction_backend import NeurokBackend

        self.status.set_state("loading", "loading the model")
        self.publish_diagnostics()
        return NeurokBackend.load(settings.checkpoint, settings.device, settings.threads)

    def _open_topics(self) -> None:
        """Publishers, subscriptions, playback timers and the worker: what exists only while active."""
        publish = self.create_publisher
        self._trajectory_pub = publish(PointCloud2, "~/trajectory", TRAJECTORY_QOS)
        self._trajectory_mesh_pub = publish(Marker, "~/trajectory_mesh", TRAJECTORY_MESH_QOS)
        self._markers_pub = publish(MarkerArray, "~/markers", MARKERS_QOS)
        self._description_pub = publish(String, "~/object_description", DESCRIPTION_QOS)
        self._joint_trajectory_pub = publish(JointTrajectory, "~/joint_trajectory", JOINT_TRAJECTORY_QOS)
        self._joint_states_pub = publish(JointState, "~/joint_states", JOINT_STATES_QOS)
        self._outputs = [self._trajectory_pub, self._trajectory_mesh_pub, self._markers_pub, self._description_pub,
                         self._joint_trajectory_pub, self._joint_states_pub]
        self._playback = MarkerPlayback(self._markers_pub)
        self._joint_playback = JointStatePlayback(self._joint_states_pub, lambda: self.get_clock().now().to_msg())
        self._tf_playback = self._tf_frames()
        # a waiting mesh runs first, then an observation, then a PredictMotion goal (which brings its own
        # mesh), then an action (which starts from the mesh and the observation)
        self._worker = LatestOnlyWorker(self._run_job, kinds=("mesh", "observation", "goal", "action"),
                                        on_error=self._job_crashed, name="neurok_worker",
                                        on_dropped=self._job_dropped)
        with self._goals_lock:
            self._goals_open = self._action_server is not None
        self._inputs = [
            self.create_timer(PLAYBACK_TICK_S, self._playback.tick),
            self.create_timer(PLAYBACK_TICK_S, self._tick_joints),
            self.create_subscription(Marker, "~/mesh", self._on_mesh, MESH_QOS),
            self.create_subscription(MultiDOFJointTrajectory, "~/action", self._on_action, ACTION_QOS),
            self.create_subscription(PointStamped, "~/clicked_point", self._on_click, CLICKED_POINT_QOS),
            self.create_subscription(PointCloud2, "~/observation", self._on_observation,
                                     OBSERVATION_RELIABLE_QOS if read_settings(self).observation_reliable
                                     else OBSERVATION_QOS),
        ]

    def _tf_frames(self):
        """A TFPlayback on /tf (the object's link frames, frame for frame with ~/joint_states), or None
        when tf2_msgs is not built (make setup builds it)."""
        try:
            from tf2_msgs.msg import TFMessage

            from neurok_ros.ros.tf_messages import TFPlayback
        except ImportError:
            return None
        publisher = self.create_publisher(TFMessage, "/tf", TF_QOS)
        self._outputs.append(publisher)
        return TFPlayback(publisher, lambda: self.get_clock().now().to_msg())

    def _tick_joints(self) -> None:
        """~/joint_states and /tf in the same tick, so RViz's RobotModel shows the frame the states name."""
        self._joint_playback.tick()
        if self._tf_playback is not None:
            self._tf_playback.tick()

    def _show_frames(self, mesh, joints=None, times=None, settings=None) -> None:
        """/tf: the mesh's links at rest (no joints: cleared), or playing the predicted joint trajectory.
        A frame the URDF cannot hang from (a mesh frame named like a link) goes to /diagnostics."""
        if self._tf_playback is None:
            return
        articulation = getattr(mesh.instance, "articulation", None)
        if articulation is None or not articulation.joints:
            self._tf_playback.clear()
            return
        try:
            if joints is None:
                self._tf_playback.show_rest(articulation, mesh.frame_id)
            else:
                centre = None
                if any(name.startswith("base_") for name in joints["names"]):
                    from neurok_ros.ros.tf_messages import free_base_centre

                    centre = free_base_centre(mesh.vertices, mesh.faces, articulation.labels)
                self._tf_playback.show(articulation, mesh.frame_id, joints["names"], times, joints["positions"],
                                       settings.playback_rate, settings.playback_loop, base_centre=centre)
        except ValueError as exc:
            self.status.update(tf_error=str(exc))
            self._tf_playback.clear()

    def _serve_predict_motion(self):
        """The PredictMotion action server (~/predict_motion), or None when neurok_interfaces is not built."""
        try:
            from neurok_ros.ros.predict_motion_action import PredictMotionServer
        except ImportError as exc:
            self.get_logger().error(f"~/predict_motion is not served: neurok_interfaces is not built into this "
                                    f"environment ({exc}); run `make setup`")
            self.status.update(predict_motion="unavailable: neurok_interfaces is not built")
            return None
        return PredictMotionServer(self, self._predict_goal, accepting=lambda: self._goals_open)

    def stop_goals(self, reason: str = "the node is shutting down") -> None:
        """Stop the PredictMotion goals (they abort with `reason`, in milliseconds) and take no more until
        the next activate. For shutdown paths that stop the executor before destroying the node: the
        executor waits for its threads, and a goal holds one."""
        self._stop_goals(reason)

    def _stop_goals(self, reason: str) -> None:
        """No goal reaches the worker from now on; the running and waiting ones stop (they abort with `reason`)."""
        with self._goals_lock:
            self._goals_open = False
            for job in self._goals:
                job.stop_reason = reason

    def _release_goals(self) -> None:
        """Abort the goals no worker will run any more (after the worker stopped)."""
        with self._goals_lock:
            jobs = list(self._goals)
        for job in jobs:
            job.finish(error=RuntimeError(job.stop_reason or "the node stopped"))

    def _close_topics(self) -> None:
        """Inputs first (no new job), then the goals (stopped at their next simulation step), the worker
        (its running job finishes, up to WORKER_STOP_S), the action server (once the goals have their
        terminal state, up to GOAL_STOP_S), then the publishers."""
        for entity in self._inputs:
            if isinstance(entity, Timer):
                self.destroy_timer(entity)
            else:
                self.destroy_subscription(entity)
        self._inputs = []
        self._stop_goals("the node closed ~/predict_motion (deactivate or shutdown)")
        if self._worker is not None:
            self._worker.stop(WORKER_STOP_S)
            self._worker = None
        self._release_goals()
        if self._action_server is not None:  # the goals end (their results go out: the server stays)
            self._action_server.wait_idle(GOAL_STOP_S)
        for publisher in self._outputs:
            self.destroy_publisher(publisher)
        self._outputs = []

    def _release_model(self) -> None:
        """Drop the backend, the encodings and the mesh in use; return freed CUDA memory to the device."""
        self.backend = self._cache = self._mesh = None
        gc.collect()
        torch = sys.modules.get("torch")  # the model was never loaded when torch was never imported
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()

    def destroy_node(self):
        self._stop_goals("the node was destroyed")
        worker = self._worker
        if worker is not None:
            worker.stop()
        self._release_goals()
        if self._action_server is not None:  # rclpy's destroy_node leaves waitables alone
            self._action_server.wait_idle(GOAL_STOP_S)
            self._action_server.destroy()
            self._action_server = None
        return super().destroy_node()

    def wait_idle(self, timeout: float) -> bool:
        """Block until the worker has nothing running or waiting (for scripts and tests)."""
        return self._worker is None or self._worker.wait_idle(timeout)

    @property
    def mesh(self) -> Optional[CurrentMesh]:
        """The mesh in use, or None before the first good one."""
        return self._mesh

    # ---------------------------------------------------------------- reporting
    def publish_diagnostics(self) -> None:
        self.status.update(predictions=self.predictions, **self._queue_values())
        self._diagnostics_pub.publish(self.status.to_array(self.get_clock().now().to_msg()))

    def _queue_values(self) -> dict:
        worker = self._worker
        if worker is None:
            return {}
        return {"superseded_actions": worker.superseded["action"], "superseded_meshes": worker.superseded["mesh"],
                "superseded_observations": worker.superseded["observation"],
                "superseded_goals": worker.superseded["goal"],
                "action_waiting": worker.waiting("action"), "mesh_waiting": worker.waiting("mesh"),
                "observation_waiting": worker.waiting("observation"), "goal_waiting": worker.waiting("goal")}

    def _reject(self, topic: str, reason: str, input_stamp: str) -> None:
        self.get_logger().error(f"rejected {topic}: {reason}")
        self.status.rejected(topic, reason, input_stamp)
        self.publish_diagnostics()

    def _job_crashed(self, kind: str, exc: BaseException) -> None:
        if self._worker is None:  # a job that outlived WORKER_STOP_S found the topics closed
            self.get_logger().warning(f"{kind} job dropped, the topics closed: {type(exc).__name__}: {exc}")
            return
        reason = f"{kind} job failed: {type(exc).__name__}: {exc}"
        self.get_logger().error(reason)
        self.status.set_state("error", reason)
        self.publish_diagnostics()

    def _job_dropped(self, kind: str, job) -> None:
        """A job that will never run (replaced by a newer one, or the worker stopped): a goal aborts."""
        if kind == "goal":
            job.finish(error=RuntimeError(job.stop_reason or "superseded by a newer PredictMotion goal "
                                                              "(one goal waits at a time)"))

    def _frame_of(self, header_frame: str) -> str:
        return header_frame or self.get_parameter("frame_id").value

    # ---------------------------------------------------------------- callbacks (executor thread)
    def _on_mesh(self, msg: Marker) -> None:
        self._worker.submit("mesh", MeshJob(msg, time.perf_counter()))

    def _stamp_for(self, header) -> Time:
        return self.get_clock().now().to_msg() if _is_zero(header.stamp) else header.stamp

    def _check_frame(self, topic: str, header) -> None:
        mesh = self._mesh
        frame = self._frame_of(header.frame_id)
        if mesh is not None and frame != mesh.frame_id:
            raise NeurokInputError(f"{topic} frame '{frame}' is not the mesh frame '{mesh.frame_id}' "
                                   f"(no tf2 here: send it in the mesh frame)")

    def _no_mesh(self) -> bool:
        return self._mesh is None and not self._worker.waiting("mesh") and self._worker.busy != "mesh"

    def _read_input(self, topic: str, unreadable: str, input_stamp: str, read):
        """read() -> what the input asks for; on bad input, refuse it on /diagnostics, return None."""
        try:
            return read()
        except NeurokInputError as exc:
            self._reject(topic, str(exc), input_stamp)
        except Exception as exc:  # a malformed message must not take the node down
            self._reject(topic, f"{unreadable}: {type(exc).__name__}: {exc}", input_stamp)
        return None

    def _on_action(self, msg: MultiDOFJointTrajectory) -> None:
        received = time.perf_counter()
        input_stamp = stamp_text(msg.header.stamp)

        def read():
            conditions = trajectory_to_conditions(msg)
            if self._no_mesh():
                raise NeurokInputError("action before any mesh: publish the object on ~/mesh first")
            self._check_frame("action", msg.header)
            return conditions
        conditions = self._read_input("~/action", "unreadable action", input_stamp, read)
        if conditions is not None:
            self._worker.submit("action", ActionJob(conditions, self._stamp_for(msg.header), input_stamp,
                                                    "~/action", received, msg.header.frame_id))

    def _on_click(self, msg: PointStamped) -> None:
        received = time.perf_counter()
        input_stamp = stamp_text(msg.header.stamp)

        def read():
            mesh = self._mesh
            if mesh is None:
                raise NeurokInputError("clicked point before any mesh: publish the object on ~/mesh first")
            self._check_frame("clicked point", msg.header)
            p = msg.point
            return mesh.surface.push_from_click((p.x, p.y, p.z), self.get_parameter("click_speed").value,
                                                self.get_parameter("contact_tolerance").value)
        conditions = self._read_input("~/clicked_point", "unusable click", input_stamp, read)
        if conditions is not None:
            self._worker.submit("action", ActionJob(conditions, self._stamp_for(msg.header), input_stamp,
                                                    "~/clicked_point", received, msg.header.frame_id))

    def _on_observation(self, msg: PointCloud2) -> None:
        received = time.perf_counter()
        input_stamp = stamp_text(msg.header.stamp)

        def read():
            if self._no_mesh():
                raise NeurokInputError("observation before any mesh: publish the object on ~/mesh first")
            self._check_frame("observation", msg.header)
            return cloud_to_points(msg)
        observed = self._read_input("~/observation", "unreadable observation", input_stamp, read)
        if observed is not None:
            self._worker.submit("observation", ObservationJob(*observed, input_stamp, received, msg.header.frame_id))

    # ---------------------------------------------------------------- worker thread
    def _run_job(self, kind: str, job) -> None:
        try:
            if kind == "mesh":
                self._run_mesh(job)
            elif kind == "observation":
                self._run_observation(job)
            elif kind == "goal":
                self._run_goal(job)
            else:
                self._run_action(job)
        finally:
            if self.status.state == "busy":
                self.status.set_state("ready", "" if self._mesh is not None else "waiting for a mesh")
            self.publish_diagnostics()

    def _read_mesh(self, marker: Marker, settings):
        """(vertices, faces, input vertex count, warning, source) of a mesh marker (~/mesh or a goal's):
        decoded, validated and decimated to max_vertices; MeshError when it cannot be used."""
        from neurok_ros.geometry.decimation import decimate_to_vertices
        from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays

        decoded = marker_to_mesh(marker)
        V, F = validate_mesh_arrays(decoded.vertices, decoded.faces)
        n_input, warning = len(V), ""
        if n_input > settings.max_vertices:
            if not settings.decimate:
                raise MeshError(f"mesh has {n_input} vertices, over max_vertices {settings.max_vertices} "
                                f"(decimate is off)")
            self.status.set_state("busy", f"decimating {n_input} vertices")
            small = decimate_to_vertices(V, F, settings.max_vertices)
            V, F = small.vertices, small.faces
            warning = (f"decimated from {n_input} to {len(V)} vertices (max_vertices {settings.max_vertices}); "
                       f"~/trajectory columns follow ~/trajectory_mesh")
            self.get_logger().warning(f"mesh {warning}")
        return V, F, n_input, warning, decoded.source

    def _run_mesh(self, job: MeshJob) -> None:
        marker = job.marker
        input_stamp = stamp_text(marker.header.stamp)
        settings = read_settings(self)
        self.status.set_state("busy", "reading mesh")
        try:
            V, F, n_input, warning, source = self._read_mesh(marker, settings)
            key = mesh_key(V, F)
            self.status.set_state("busy", "encoding mesh")
            self.publish_diagnostics()
            instance, cached, encode_s = self._cache.get_or_encode(key, lambda: self.backend.encode(V, F))
            surface = SurfaceIndex(V, F)
        except NeurokInputError as exc:
            self._reject("~/mesh", str(exc), input_stamp)
            return
        except Exception as exc:
            self._reject("~/mesh", f"mesh could not be used: {type(exc).__name__}: {exc}", input_stamp)
            return
        frame = self._frame_of(marker.header.frame_id)
        self._mesh = CurrentMesh(V, F, frame, key, instance, surface, encode_s, cached, n_input, input_stamp)
        self._trajectory_mesh_pub.publish(mesh_to_marker(V, F, frame, name="trajectory_mesh"))
        self._publish_description(instance)
        self._show_frames(self._mesh)
        # RViz shows the new object at rest until its first prediction
        self._playback.show(V[None], np.zeros(1), F, frame, [], 0.0, False)
        self.status.update(mesh_key=key[:16], mesh_vertices=len(V), mesh_faces=len(F), mesh_input_vertices=n_input,
                           mesh_frame=frame, mesh_stamp=input_stamp, mesh_source=source,
                           mesh_encode_s=encode_s, mesh_encoding_from_cache=cached,
                           mesh_ready_s=time.perf_counter() - job.received, cached_encodings=len(self._cache))
        self.status.accepted("~/mesh", f"{len(V)} vertices, {len(F)} faces, frame '{frame}'"
                             + (", encoding from cache" if cached else f", encoded in {encode_s:.2f} s"),
                             input_stamp, warning)
        self.status.set_state("ready")

    def _publish_description(self, instance) -> None:
        """~/object_description: the URDF of the instance's parts and joints, when the backend reads them."""
        describe = getattr(self.backend, "description", None)
        if describe is None:
            return
        started = time.perf_counter()
        try:
            urdf = describe(instance)
        except Exception as exc:  # the mesh stays usable without its description
            self.get_logger().warning(f"no object description: {type(exc).__name__}: {exc}")
            self.status.update(description="", description_error=f"{type(exc).__name__}: {exc}")
            return
        self._description_pub.publish(String(data=urdf))
        self.status.update(description_bytes=len(urdf), description_error="",
                           description_s=time.perf_counter() - started)

    def _run_observation(self, job: ObservationJob) -> None:
        mesh = self._mesh
        if mesh is None:
            self._reject("~/observation", "observation before any mesh: no usable mesh has been received",
                         job.input_stamp)
            return
        received = mesh.received or mesh
        settings = read_settings(self)
        self.status.set_state("busy", "fitting the observation")
        self.publish_diagnostics()
        try:
            if job.frame_id and job.frame_id != mesh.frame_id:  # the mesh may have changed since the callback
                raise NeurokInputError(f"observation frame '{job.frame_id}' is not the mesh frame '{mesh.frame_id}' "
                                       f"(no tf2 here: send it in the mesh frame)")
            through = self.backend.fit_scan(received.instance, received.vertices, received.faces, job.points,
                                            settings)
            fit = through.fit
            if fit.moved:
                V = np.asarray(fit.vertices, dtype=np.float64)
                key = mesh_key(V, received.faces)
                instance, cached, encode_s = self._cache.get_or_encode(
                    key, lambda: self.backend.encode(V, received.faces))
                state = CurrentMesh(V, received.faces, received.frame_id, key, instance,
                                    SurfaceIndex(V, received.faces), encode_s, cached, received.input_vertices,
                                    job.input_stamp, received=received)
            else:
                state = received
        except NeurokInputError as exc:
            self._reject("~/observation", str(exc), job.input_stamp)
            return
        except Exception as exc:
            self._reject("~/observation", f"observation could not be fitted: {type(exc).__name__}: {exc}",
                         job.input_stamp)
            return
        self._mesh = state
        self._trajectory_mesh_pub.publish(mesh_to_marker(state.vertices, state.faces, state.frame_id,
                                                         name="trajectory_mesh"))
        self._playback.show(state.vertices[None], np.zeros(1), state.faces, state.frame_id, [], 0.0, False)
        self.status.update(observation_stamp=job.input_stamp, observation_moved=fit.moved,
                           observation_points=len(job.points), observation_dropped_points=job.dropped,
                           observation_support_points=fit.support_points,
                           observation_residual_median_m=fit.residual[0], observation_residual_p90_m=fit.residual[1],
                           observation_received_residual_p90_m=fit.rest_residual[1], observation_fit_s=fit.seconds,
                           observation_ready_s=time.perf_counter() - job.received, mesh_key=state.key[:16],
                           observation_joints=joint_text(through.joints), observation_kept=through.kept)
        pose = "moved from the received mesh" if fit.moved else "the received mesh as it is (q = 0)"
        if through.joints is not None:
            pose += f"; joints {joint_text(through.joints)} (kept: {through.kept})"
        self.status.accepted("~/observation", f"{len(job.points)} points: {pose}; distance to the fitted surface "
                             f"median {fit.residual[0]:.4f} m, 90% {fit.residual[1]:.4f} m "
                             f"(received mesh: {fit.rest_residual[1]:.4f} m); fit in {fit.seconds:.2f} s",
                             job.input_stamp)
        self.status.set_state("ready")

    def _run_action(self, job: ActionJob) -> None:
        mesh = self._mesh
        if mesh is None:
            self._reject(job.topic, "action before any mesh: no usable mesh has been received", job.input_stamp)
            return
        settings = read_settings(self)
        try:  # refused here, before any simulation time is spent (predict_motion checks it again)
            if job.frame_id and job.frame_id != mesh.frame_id:  # the mesh may have changed since the callback
                raise NeurokInputError(f"action frame '{job.frame_id}' is not the mesh frame '{mesh.frame_id}' "
                                       f"(no tf2 here: send it in the mesh frame)")
            distances = mesh.surface.check_contacts(job.conditions, settings.contact_tolerance)
        except NeurokInputError as exc:
            self._reject(job.topic, str(exc), job.input_stamp)
            return
        self.status.accepted(job.topic, f"{job.conditions.num_contacts} contact(s)", job.input_stamp)
        self.status.set_state("busy", "simulating")
        self.publish_diagnostics()
        started = time.perf_counter()
        try:
            result = self.backend.predict(mesh.instance, job.conditions, settings)
            frames, times = _prediction_arrays(result, len(mesh.vertices))
        except NeurokInputError as exc:  # an action or setting the simulation refuses
            self._reject(job.topic, str(exc), job.input_stamp)
            return
        except Exception as exc:
            reason = f"prediction failed: {type(exc).__name__}: {exc}"
            self.status.set_state("error", reason)
            self._reject(job.topic, reason, job.input_stamp)
            return
        simulate_s = time.perf_counter() - started
        publish_started = time.perf_counter()
        self._trajectory_pub.publish(frames_to_cloud(frames, times, mesh.frame_id, job.stamp))
        publish_s = time.perf_counter() - publish_started
        joints = getattr(result, "joints", None)
        if joints is not None:
            self._joint_trajectory_pub.publish(joint_trajectory(joints["names"], times, joints["positions"],
                                                                joints["velocities"], mesh.frame_id, job.stamp))
            self._joint_playback.show(joints["names"], times, joints["positions"], joints["velocities"],
                                      settings.playback_rate, settings.playback_loop)
            self._show_frames(mesh, joints, times, settings)
        c = job.conditions
        self._playback.show(frames, times, mesh.faces, mesh.frame_id,
                            contact_markers(c.positions, c.velocities, c.path_positions, mesh.frame_id, mesh.size),
                            settings.playback_rate, settings.playback_loop)
        fresh = mesh.predictions == 0 and not mesh.from_cache
        mesh.predictions += 1
        self.predictions += 1
        self.status.update(
            last_stamp=stamp_text(job.stamp), last_input_stamp=job.input_stamp, last_topic=job.topic,
            last_frames=int(frames.shape[0]), last_vertices=int(frames.shape[1]), last_contacts=c.num_contacts,
            last_contact_distance_max=float(distances.max()),
            encoding_from_cache=not fresh, encode_s=mesh.encode_s if fresh else 0.0,
            simulate_s=simulate_s, publish_s=publish_s, latency_s=time.perf_counter() - job.received,
            **{f"sim_{k}": v for k, v in result.timings.items()},
            **{f"sim_{k}": v for k, v in result.summary.items() if isinstance(v, (int, float, str, bool))},
            last_energy_j="" if result.energy is None else energy_text(result.energy))
        self.status.set_state("ready")

    # ---------------------------------------------------------------- PredictMotion goals
    def _predict_goal(self, goal, overrides: dict, feedback):
        """PredictMotionServer's predict, on the executor thread that runs the goal: hand the goal to
        the worker (all model work stays on that one thread, with the encoding cache) and wait."""
        job = GoalJob(goal, overrides, feedback, time.perf_counter())
        with self._goals_lock:
            worker = self._worker
            if not self._goals_open or worker is None:
                raise RuntimeError("neurok_node is not active")
            self._goals.add(job)
        try:
            worker.submit("goal", job)  # a goal waiting before this one is superseded (_job_dropped)
            while not job.done.wait(GOAL_POLL_S):
                if job.should_stop() and worker.withdraw("goal", job):  # canceled while it waits: it never runs
                    outcome = self._finish_stopped(job, "canceled while waiting for the worker")
                    self._count_goal(job, outcome)
                    self.publish_diagnostics()
        finally:
            with self._goals_lock:
                self._goals.discard(job)
        if job.error is not None:
            raise job.error
        return job.result

    def _goal_stage(self, job: GoalJob, progress: float, stage: str) -> None:
        """A stage change: feedback to the client, and /diagnostics (busy: <stage>)."""
        job.feedback(progress, stage)
        self.status.set_state("busy", stage)
        self.publish_diagnostics()

    def _goal_settings(self, overrides: dict):
        """The node's settings with a goal's overrides on top; NeurokInputError for a value out of range."""
        for name, value in overrides.items():
            problem = check_value(SPEC_BY_NAME[name], value)
            if problem:
                raise NeurokInputError(f"goal {problem}")
        return replace(read_settings(self), **overrides)

    def _run_goal(self, job: GoalJob) -> None:
        """A PredictMotion goal on the worker; the mesh in use and the topics' outputs stay as they are."""
        input_stamp = stamp_text(job.goal.contacts.header.stamp)
        try:
            job.finish(result=self._predict_goal_on_worker(job, input_stamp))
            outcome = "succeeded"
        except Cancelled as exc:
            outcome = self._finish_stopped(job, str(exc))
            self.get_logger().info(f"PredictMotion goal {outcome}: {exc}")
        except NeurokInputError as exc:
            self._reject("~/predict_motion", str(exc), input_stamp)
            job.finish(error=exc)
            outcome = f"aborted: {exc}"
        except Exception as exc:
            reason = f"prediction failed: {type(exc).__name__}: {exc}"
            self.status.set_state("error", reason)
            self._reject("~/predict_motion", reason, input_stamp)
            job.finish(error=exc)
            outcome = f"aborted: {reason}"
        self._count_goal(job, outcome)

    def _count_goal(self, job: GoalJob, outcome: str) -> None:
        """/diagnostics values of a goal's end: outcome "succeeded", "canceled" or "aborted: <reason>"."""
        with self._goals_lock:
            self.goal_counts[outcome.split(":")[0]] += 1
            counts = dict(self.goal_counts)
        self.status.update(goals_succeeded=counts["succeeded"], goals_canceled=counts["canceled"],
                           goals_aborted=counts["aborted"], last_goal=outcome,
                           last_goal_stamp=stamp_text(job.goal.contacts.header.stamp),
                           last_goal_s=time.perf_counter() - job.received)

    @staticmethod
    def _finish_stopped(job: GoalJob, how: str) -> str:
        """End a goal that stopped early: aborted when the node stopped it, else (a cancel) with a Result
        whose summary_json is {"canceled": how}. Returns the outcome for /diagnostics."""
        if job.stop_reason:
            job.finish(error=RuntimeError(job.stop_reason))
            return f"aborted: {job.stop_reason}"
        from neurok_interfaces.action import PredictMotion

        job.finish(result=PredictMotion.Result(summary_json=json.dumps({"canceled": how})))
        return "canceled"

    def _predict_goal_on_worker(self, job: GoalJob, input_stamp: str):
        """The PredictMotion.Result of a goal: its mesh read as ~/mesh reads one and encoded through the
        encoding cache, its contacts checked as ~/action's are, the prediction with the node's settings
        and the goal's overrides, stopped by job.should_stop; feedback at every stage change and every
        FEEDBACK_PERIOD_S while simulating."""
        from neurok_ros.articulation.articulation import Articulation
        from neurok_ros.ros.predict_motion_action import motion_result

        goal = job.goal
        if job.should_stop():
            raise Cancelled("stopped before it started")
        settings = self._goal_settings(job.overrides)
        self._goal_stage(job, 0.0, "reading mesh")
        V, F, n_input, warning, _ = _refused_unless_read("mesh could not be used", self._read_mesh, goal.mesh,
                                                         settings)
        frame = self._frame_of(goal.mesh.header.frame_id)
        conditions = _refused_unless_read("unreadable contacts", trajectory_to_conditions, goal.contacts)
        if goal.contacts.header.frame_id and goal.contacts.header.frame_id != frame:
            raise NeurokInputError(f"contacts frame '{goal.contacts.header.frame_id}' is not the mesh frame "
                                   f"'{frame}' (no tf2 here: send them in the mesh frame)")
        key = mesh_key(V, F)

        def encode():
            self._goal_stage(job, 0.05, "encoding mesh")
            return self.backend.encode(V, F)
        instance, cached, encode_s = self._cache.get_or_encode(key, encode)
        if job.should_stop():
            raise Cancelled("stopped after reading the mesh")
        current = self._mesh
        surface = current.surface if current is not None and current.key == key else SurfaceIndex(V, F)
        distances = surface.check_contacts(conditions, settings.contact_tolerance)
        self.status.accepted("~/predict_motion", f"goal: {len(V)} vertices, {conditions.num_contacts} contact(s)"
                             + (", encoding from cache" if cached else f", encoded in {encode_s:.2f} s"),
                             input_stamp, warning)
        self._goal_stage(job, 0.1, "simulating")
        done, last_feedback = 0.1, time.monotonic()

        def progress(fraction: float) -> None:  # the fraction of the simulated time span integrated
            nonlocal done
            done = 0.1 + 0.85 * fraction

        def should_stop() -> bool:  # asked at every integrator step: feedback every FEEDBACK_PERIOD_S too
            nonlocal last_feedback
            now = time.monotonic()
            if now - last_feedback >= FEEDBACK_PERIOD_S:
                last_feedback = now
                job.feedback(done, "simulating")
            return job.should_stop()
        started = time.perf_counter()
        result = self.backend.predict(instance, conditions, settings, should_stop=should_stop, progress=progress)
        frames, times = _prediction_arrays(result, len(V))
        simulate_s = time.perf_counter() - started

        self._goal_stage(job, 0.95, "publishing")
        stamp = self._stamp_for(goal.contacts.header)
        used = getattr(instance, "articulation", None) if settings.articulation == "auto" else None
        urdf = self._description_text(instance) if used is not None else ""
        if used is None:  # the latent chart, as the prediction saw it: one soft part
            used = Articulation(np.zeros(len(V), np.int64), [], "soft")
        summary = {
            "mesh_key": key[:16], "mesh_vertices": len(V), "mesh_faces": len(F), "mesh_input_vertices": n_input,
            "mesh_frame": frame, "mesh_warning": warning, "encoding_from_cache": cached, "encode_s": encode_s,
            "frames": int(frames.shape[0]), "contacts": conditions.num_contacts,
            "contact_distance_max": float(distances.max()), "overrides": job.overrides, "simulate_s": simulate_s,
            **{f"sim_{k}": v for k, v in result.timings.items()},
            **{f"sim_{k}": v for k, v in result.summary.items() if isinstance(v, (int, float, str, bool))},
            "energy_j": None if result.energy is None else np.asarray(result.energy, dtype=np.float64),
        }
        summary["latency_s"] = time.perf_counter() - job.received
        return motion_result(frames, times, frame, stamp, joints=getattr(result, "joints", None), articulation=used,
                             urdf=urdf, mesh_stamp=goal.mesh.header.stamp, summary=summary)

    def _description_text(self, instance) -> str:
        """The URDF of the instance's parts and joints (as on ~/object_description), '' when the backend
        writes none."""
        describe = getattr(self.backend, "description", None)
        if describe is None:
            return ""
        try:
            return describe(instance)
        except Exception as exc:  # the prediction stays usable without its description
            self.get_logger().warning(f"no object description: {type(exc).__name__}: {exc}")
            return ""


def _refused_unless_read(unreadable: str, read, *args):
    """read(*args); any failure but a NeurokInputError raised as one, "<unreadable>: <type>: <message>"
    (a malformed goal is refused like a malformed message, and leaves the node's state alone)."""
    try:
        return read(*args)
    except NeurokInputError:
        raise
    except Exception as exc:
        raise NeurokInputError(f"{unreadable}: {type(exc).__name__}: {exc}") from exc


def _prediction_arrays(result, vertex_count: int) -> tuple[np.ndarray, np.ndarray]:
    """(frames (T, n, 3), times (T,)) float32 of a MotionResult; RuntimeError for a wrong shape or a
    non-finite value (a diverged simulation)."""
    frames = np.asarray(result.vertices, dtype=np.float32)
    times = np.asarray(result.times, dtype=np.float32).reshape(-1)
    if frames.ndim != 3 or frames.shape[1:] != (vertex_count, 3) or frames.shape[0] != times.size:
        raise RuntimeError(f"prediction has shape {frames.shape} with {times.size} times, expected "
                           f"(T, {vertex_count}, 3)")
    if not np.isfinite(frames).all():
        raise RuntimeError("prediction holds NaN or inf (the simulation diverged)")
    return frames, times


def node_executor(context=None):
    """The executor to spin neurok_node with: a MultiThreadedExecutor of EXECUTOR_THREADS threads, so
    that a PredictMotion goal waiting for the worker leaves threads for cancel requests, /diagnostics,
    the topics and the lifecycle services (the node's own callbacks stay in its default, mutually
    exclusive group: one at a time, as with a SingleThreadedExecutor)."""
    from rclpy.executors import MultiThreadedExecutor

    return MultiThreadedExecutor(num_threads=EXECUTOR_THREADS, context=context)


def main(args=None) -> int:
    """Console script `neurok_node` (and `neurok serve`): spin the node until Ctrl-C."""
    from rclpy.executors import ExternalShutdownException

    rclpy.init(args=sys.argv if args is None else args)
    node = None
    try:
        try:
            node = NeurokNode()
        except NeurokInputError as exc:
            print(f"neurok_node: error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:
            print(f"neurok_node: error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        executor = node_executor()
        executor.add_node(node)
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        return 0
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
