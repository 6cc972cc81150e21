"""The predicted motion in joints: trajectory_msgs/JointTrajectory, and sensor_msgs/JointState played back
for RViz's RobotModel (fed the URDF from ~/object_description).

Joint names are the URDF's (`neurok articulate`); positions in rad (revolute) or m (prismatic),
relative to the input pose; velocities in rad/s or m/s; time_from_start from the prediction's t = 0.
"""
from __future__ import annotations

import threading
import time
from typing import Optional

import numpy as np
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from neurok_ros.ros.playback_markers import playback_elapsed, playback_index


def duration(seconds: float) -> Duration:
    whole = int(np.floor(seconds))
    return Duration(sec=whole, nanosec=int(round((seconds - whole) * 1e9)) % 1_000_000_000)


def joint_trajectory(names: list, times: np.ndarray, positions: np.ndarray, velocities: np.ndarray,
                     frame_id: str, stamp) -> JointTrajectory:
    """JointTrajectory of T points: times (T,) s, positions and velocities (T, J)."""
    msg = JointTrajectory(joint_names=[str(n) for n in names])
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    msg.points = [JointTrajectoryPoint(positions=p.tolist(), velocities=v.tolist(), time_from_start=duration(t))
                  for t, p, v in zip(np.asarray(times, float), np.asarray(positions, float),
                                     np.asarray(velocities, float))]
    return msg


def trajectory_arrays(msg: JointTrajectory) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
    """(names, times (T,), positions (T, J), velocities (T, J)) of a JointTrajectory."""
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points])
    count = len(msg.joint_names)
    positions = np.array([list(p.positions) for p in msg.points], dtype=np.float64).reshape(-1, count)
    velocities = np.array([list(p.velocities) for p in msg.points], dtype=np.float64).reshape(-1, count)
    return list(msg.joint_names), times, positions, velocities


class TimedPlayback:
    """The latest trajectory played in real time (times `rate`) on a publisher, one message per tick:
    tick() is called by a node timer (executor thread), _play() by the worker thread; stamp() gives
    the header time (the node clock). A subclass builds the message of a frame: _message(item, index)."""

    def __init__(self, publisher, stamp, clock=time.monotonic):
        self._publisher = publisher
        self._stamp = stamp
        self._clock = clock
        self._lock = threading.Lock()
        self._item: Optional[dict] = None
        self.published = 0

    def _play(self, item: dict) -> None:
        """Start playing item: times (T,) s from 0, rate, loop, and what _message reads."""
        with self._lock:
            self._item = {**item, "start": None}

    def clear(self) -> None:
        """Stop publishing (no object)."""
        with self._lock:
            self._item = None

    def tick(self) -> None:
        with self._lock:
            item = self._item
            if item is None:
                return
            index = playback_index(item["times"], playback_elapsed(item, self._clock), item["rate"], item["loop"])
        self._publisher.publish(self._message(item, index))
        self.published += 1


class JointStatePlayback(TimedPlayback):
    """Plays the latest joint trajectory on a JointState publisher (TimedPlayback)."""

    def show(self, names: list, times: np.ndarray, positions: np.ndarray, velocities: np.ndarray, rate: float,
             loop: bool) -> None:
        """Start playing positions and velocities (T, J) at times (T,) s; rate 0: hold the last state."""
        self._play({"names": [str(n) for n in names], "times": np.asarray(times, float) - float(times[0]),
                    "positions": np.asarray(positions, float), "velocities": np.asarray(velocities, float),
                    "rate": float(rate), "loop": bool(loop)})

    def _message(self, item: dict, index: int) -> JointState:
        msg = JointState(name=item["names"], position=item["positions"][index].tolist(),
                         velocity=item["velocities"][index].tolist())
        msg.header.stamp = self._stamp()
        return msg
