"""The PredictMotion action (neurok_interfaces/action/PredictMotion, msg/README.md "Typed interfaces"):
a goal's settings overrides, and an rclpy ActionServer that hands each goal to a prediction function.

The node attaches it with its own prediction: `PredictMotionServer(node, predict)`, where
`predict(goal, overrides, feedback) -> PredictMotion.Result`:
  goal       the PredictMotion.Goal (mesh marker as ~/mesh, contacts as ~/action);
  overrides  goal_overrides(goal): {parameter: value} of the settings the goal sets (duration s, fps,
             gravity (x, y, z) m/s^2, free_base); the node's parameters hold for the others;
  feedback   feedback(progress 0..1, stage) publishes a PredictMotion.Feedback and returns False once
             the client has asked to cancel: predict should then stop and return (any Result); the
             goal ends CANCELED. feedback.cancel_requested says the same without publishing (cheap
             enough to ask at every simulation step).
A goal with an invalid setting is rejected; a cancel request is always accepted; an exception from
predict aborts the goal with summary_json {"error": "<type>: <message>"}.

predict runs on the executor thread that executes the goal (an rclpy task, outside any callback
group): spin the node with a MultiThreadedExecutor so that cancel requests, other goals and the
node's other callbacks are served while it runs.
"""
from __future__ import annotations

import json
import math
import threading
import time
from typing import Callable

from neurok_interfaces.action import PredictMotion

ACTION_NAME = "~/predict_motion"
RESULT_SEND_S = 0.05  # wait_idle: the time rclpy gets to send the results of the goals that just ended
FREE_BASE_VALUES = {PredictMotion.Goal.FREE_BASE_OFF: False, PredictMotion.Goal.FREE_BASE_ON: True}

Feedback = Callable[[float, str], bool]
Predict = Callable[[object, dict, Feedback], object]


def goal_overrides(goal) -> dict:
    """{parameter: value} of the settings a PredictMotion goal overrides (0, empty or FREE_BASE_DEFAULT:
    the node's parameter); ValueError naming an invalid one. Ranges beyond these are the node's to check."""
    overrides: dict = {}
    for name in ("duration", "fps"):
        value = float(getattr(goal, name))
        if not math.isfinite(value) or value < 0.0:
            raise ValueError(f"{name} must be a finite number >= 0 (0: the node's parameter), got {value!r}")
        if value > 0.0:
            overrides[name] = value
    gravity = [float(g) for g in goal.gravity]
    if gravity:
        if len(gravity) != 3 or not all(math.isfinite(g) for g in gravity):
            raise ValueError(f"gravity must be empty (the node's parameter) or 3 finite numbers, got {gravity}")
        overrides["gravity"] = tuple(gravity)
    if goal.free_base != PredictMotion.Goal.FREE_BASE_DEFAULT:
        if goal.free_base not in FREE_BASE_VALUES:
            raise ValueError(f"free_base must be FREE_BASE_DEFAULT (0), FREE_BASE_OFF (1) or FREE_BASE_ON (2), got "
                             f"{goal.free_base}")
        overrides["free_base"] = FREE_BASE_VALUES[goal.free_base]
    return overrides


def json_value(value):
    """`value` as plain JSON: numpy scalars and arrays as numbers and lists, tuples as lists, NaN and
    infinities as null (strict JSON has no token for them)."""
    if hasattr(value, "tolist"):  # numpy
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value


def motion_result(frames, times, frame_id: str, stamp, *, joints=None, articulation=None, urdf: str = "",
                  mesh_stamp=None, summary=None):
    """A PredictMotion.Result with the messages the node's topics carry for the same prediction:
    trajectory as ~/trajectory (frames (T, N, 3), times (T,)), joint_trajectory as ~/joint_trajectory
    (joints {"names", "positions", "velocities"}, or None: no joint names), both stamped `stamp` in
    frame_id; articulation (neurok_ros.articulation.Articulation, or None: left empty) with `urdf`,
    stamped mesh_stamp; summary: a dict, as JSON (json_value)."""
    from neurok_ros.ros.articulation_message import articulation_to_message
    from neurok_ros.ros.joint_messages import joint_trajectory
    from neurok_ros.ros.trajectory_cloud import frames_to_cloud

    result = PredictMotion.Result(trajectory=frames_to_cloud(frames, times, frame_id, stamp),
                                  summary_json=json.dumps(json_value(summary or {}), allow_nan=False))
    if joints is not None:
        result.joint_trajectory = joint_trajectory(joints["names"], times, joints["positions"], joints["velocities"],
                                                   frame_id, stamp)
    else:
        result.joint_trajectory.header.frame_id = frame_id
        result.joint_trajectory.header.stamp = stamp
    if articulation is not None:
        result.articulation = articulation_to_message(articulation, frame_id, mesh_stamp, urdf)
    return result


class GoalFeedback:
    """The `feedback` handed to predict: feedback(progress, stage) publishes a PredictMotion.Feedback
    (progress clamped to 0..1) and returns False once cancel is requested; cancel_requested reads
    that alone."""

    def __init__(self, goal_handle):
        self._goal_handle = goal_handle

    @property
    def cancel_requested(self) -> bool:
        return self._goal_handle.is_cancel_requested

    def __call__(self, progress: float, stage: str) -> bool:
        progress = min(max(float(progress), 0.0), 1.0) if math.isfinite(progress) else 0.0
        self._goal_handle.publish_feedback(PredictMotion.Feedback(progress=progress, stage=str(stage)))
        return not self.cancel_requested


class PredictMotionServer:
    """An ActionServer of PredictMotion named `name` on `node`, running predict(goal, overrides, feedback)
    for each accepted goal (see the module docstring); accepting() false: goals are rejected (an
    inactive node). Its callbacks are in a reentrant group, so that
    with a MultiThreadedExecutor cancel requests are answered while a goal runs."""

    def __init__(self, node, predict: Predict, name: str = ACTION_NAME, callback_group=None,
                 accepting: Callable[[], bool] = lambda: True):
        from rclpy.action import ActionServer
        from rclpy.callback_groups import ReentrantCallbackGroup

        self._node = node
        self._predict = predict
        self._accepting = accepting
        self._running = 0  # goals between the start of their execution and their terminal state
        self._idle = threading.Condition()
        self._server = ActionServer(node, PredictMotion, name, execute_callback=self._execute,
                                    goal_callback=self._on_goal, cancel_callback=self._on_cancel,
                                    callback_group=callback_group or ReentrantCallbackGroup())

    def _on_goal(self, goal):
        from rclpy.action import GoalResponse

        if not self._accepting():
            self._node.get_logger().warning("rejected a PredictMotion goal: the node is not active")
            return GoalResponse.REJECT
        try:
            goal_overrides(goal)
        except ValueError as exc:
            self._node.get_logger().warning(f"rejected a PredictMotion goal: {exc}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle):
        from rclpy.action import CancelResponse

        return CancelResponse.ACCEPT

    def _execute(self, goal_handle):
        with self._idle:
            self._running += 1
        try:
            return self._run(goal_handle)
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def _run(self, goal_handle):
        try:
            result = self._predict(goal_handle.request, goal_overrides(goal_handle.request),
                                   GoalFeedback(goal_handle))
        except Exception as exc:  # any failure of a prediction ends its goal, never the node
            self._node.get_logger().error(f"PredictMotion goal aborted: {type(exc).__name__}: {exc}")
            goal_handle.abort()
            return PredictMotion.Result(summary_json=json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.succeed()
        return result if result is not None else PredictMotion.Result()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no goal executes (each has its terminal state and its result sent); False on timeout."""
        with self._idle:
            waited = self._running > 0
            if not self._idle.wait_for(lambda: self._running == 0, timeout):
                return False
        if waited:  # rclpy sends the result right after the execute callback returns, on its thread
            time.sleep(RESULT_SEND_S)
        return True

    def destroy(self) -> None:
        self._server.destroy()
