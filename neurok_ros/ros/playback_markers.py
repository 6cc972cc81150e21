"""RViz playback of a prediction on ~/markers (visualization_msgs/MarkerArray).

On a new prediction (and at each restart of a loop) the node publishes [DELETEALL, contact arrows,
drag paths]; then one MarkerArray holding one TRIANGLE_LIST frame (namespace "neurok_playback",
id 0, replaced in place) per change of the shown frame. The shown frame follows the wall clock
scaled by playback_rate, so a slow RViz or a big mesh skips frames instead of lagging; with
playback_loop the animation repeats after a short pause. All markers are in the mesh frame with
stamp 0 (RViz then uses the latest transform).

Frames are built one at a time on the timer tick, never all at once, and not as Python Point
objects (60k of them take ~0.4 s): TriangleListTemplate serialises the message once without points
and splices each frame's corner coordinates into the CDR bytes with numpy (~ms), which the
publisher sends as a serialised message.
"""
from __future__ import annotations

import struct
import threading
import time
from typing import Optional

import numpy as np
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

FRAME_NS = "neurok_playback"
CONTACT_NS = "neurok_contacts"
PATH_NS = "neurok_drag_path"
LOOP_PAUSE_S = 0.5  # playback time the last frame is held before a loop restarts
_MESH_COLOUR = ColorRGBA(r=0.85, g=0.55, b=0.25, a=1.0)
_CONTACT_COLOUR = ColorRGBA(r=0.9, g=0.1, b=0.1, a=1.0)
_PATH_COLOUR = ColorRGBA(r=0.1, g=0.4, b=0.9, a=1.0)


def _marker(frame_id: str, ns: str, marker_id: int, marker_type: int) -> Marker:
    m = Marker()
    m.header.frame_id = frame_id
    m.ns = ns
    m.id = int(marker_id)
    m.type = marker_type
    m.action = Marker.ADD
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = 1.0
    return m


def delete_all_marker(frame_id: str) -> Marker:
    m = Marker()
    m.header.frame_id = frame_id
    m.action = Marker.DELETEALL
    return m


def frame_marker(vertices: np.ndarray, faces: np.ndarray, frame_id: str, marker_id: int = 0) -> Marker:
    """TRIANGLE_LIST of one frame: vertices (N, 3) metres, faces (M, 3)."""
    m = _marker(frame_id, FRAME_NS, marker_id, Marker.TRIANGLE_LIST)
    m.color = _MESH_COLOUR
    corners = np.asarray(vertices, dtype=np.float64)[faces].reshape(-1, 3).tolist()
    m.points = [Point(x=x, y=y, z=z) for x, y, z in corners]
    return m


def contact_markers(positions: np.ndarray, velocities: np.ndarray, path_positions: np.ndarray,
                    frame_id: str, size: float) -> list:
    """An ARROW per contact ending at the contact, pointing along its initial velocity (length
    grows with speed, between 0.05 and 0.3 of `size`, the mesh's bounding-box diagonal; a SPHERE
    for a contact at rest), and a LINE_STRIP per contact through its drag path."""
    out = []
    for i, (p, v) in enumerate(zip(np.asarray(positions, float), np.asarray(velocities, float))):
        speed = float(np.linalg.norm(v))
        if speed > 0:
            m = _marker(frame_id, CONTACT_NS, i, Marker.ARROW)
            length = float(np.clip(0.2 * speed, 0.05 * size, 0.3 * size))
            start = p - v / speed * length
            m.points = [Point(x=float(start[0]), y=float(start[1]), z=float(start[2])),
                        Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))]
            m.scale.x, m.scale.y, m.scale.z = 0.015 * size, 0.03 * size, 0.04 * size
        else:
            m = _marker(frame_id, CONTACT_NS, i, Marker.SPHERE)
            m.pose.position = Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
            m.scale.x = m.scale.y = m.scale.z = 0.03 * size
        m.color = _CONTACT_COLOUR
        out.append(m)
    path = np.asarray(path_positions, float)
    if path.size:
        for i in range(path.shape[1]):
            m = _marker(frame_id, PATH_NS, i, Marker.LINE_STRIP)
            m.scale.x = 0.01 * size
            m.color = _PATH_COLOUR
            line = np.vstack([np.asarray(positions, float)[i:i + 1], path[:, i]])
            m.points = [Point(x=x, y=y, z=z) for x, y, z in line.tolist()]
            out.append(m)
    return out


class TriangleListTemplate:
    """Serialised MarkerArray([frame_marker(V, faces, frame_id)]) for any V (n, 3), built by
    splicing V[faces] into the CDR bytes of the same message without points. The splice is checked
    against rclpy's own serialisation when the template is made; `ok` is False (use frame_marker)
    if the layout ever differs."""

    def __init__(self, faces: np.ndarray, frame_id: str):
        from rclpy.serialization import deserialize_message, serialize_message

        self.faces = np.asarray(faces, dtype=np.int64)
        self.frame_id = frame_id
        empty = _marker(frame_id, FRAME_NS, 0, Marker.TRIANGLE_LIST)
        empty.color = _MESH_COLOUR
        probe = _with_points(empty, [[1.5, -2.25, 3.125], [0.5, 0.25, -7.0]])
        b0 = serialize_message(MarkerArray(markers=[empty]))
        b1 = serialize_message(MarkerArray(markers=[_with_points(empty, [[1.0, 2.0, 3.0]])]))
        # The point count is 0 in b0 and 1 in b1 at the same offset. Padding bytes hold arbitrary
        # values, so candidates are found by value and the first one whose splice deserialises to
        # the probe message wins.
        self.ok = False
        corners = np.array([[p.x, p.y, p.z] for p in probe.points])
        expected = deserialize_message(serialize_message(MarkerArray(markers=[probe])), MarkerArray)  # float32 rounding
        for at in range(4, len(b0) - 3, 4):
            if b0[at:at + 4] != b"\0\0\0\0" or b1[at:at + 4] != struct.pack("<I", 1):
                continue
            self._count_at = at
            self._prefix, self._suffix = b0[:at], b0[at + 4:]
            for origin in (4, 0):  # where the serialiser counts alignment from (4: after the CDR header)
                self._origin = origin
                try:
                    self.ok = deserialize_message(self._splice(corners), MarkerArray) == expected
                except Exception:
                    self.ok = False
                if self.ok:
                    return

    def _splice(self, corners: np.ndarray) -> bytes:
        # Doubles align to 8 bytes, counted from self._origin.
        start = self._count_at + 4
        pad = (-(start - self._origin)) % 8 if len(corners) else 0
        return b"".join((self._prefix, struct.pack("<I", len(corners)), b"\0" * pad,
                         np.ascontiguousarray(corners, dtype="<f8").tobytes(), self._suffix))

    def serialised(self, vertices: np.ndarray) -> bytes:
        """The serialised MarkerArray of one frame, vertices (n, 3) metres."""
        return self._splice(np.asarray(vertices, dtype=np.float64)[self.faces].reshape(-1, 3))


def _with_points(marker: Marker, points) -> Marker:
    from copy import deepcopy

    m = deepcopy(marker)
    m.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in points]
    return m


def playback_index(times: np.ndarray, elapsed: float, rate: float, loop: bool) -> int:
    """The frame due `elapsed` wall-clock seconds into a playback of frames at times (T,) s from 0,
    played `rate` times real time (0: the last frame), looping after LOOP_PAUSE_S when `loop`."""
    last = len(times) - 1
    if rate <= 0 or last == 0:
        return last
    t = elapsed * rate
    if loop:
        t = t % (times[-1] + LOOP_PAUSE_S)
    return min(int(np.searchsorted(times, t, side="right")) - 1, last)


def playback_elapsed(item: dict, clock) -> float:
    """Seconds since the playback `item` started (its first tick starts it: item["start"])."""
    if item["start"] is None:
        item["start"] = clock()
    return clock() - item["start"]


class MarkerPlayback:
    """Plays the latest prediction on a MarkerArray publisher; tick() is called by a node timer
    (executor thread), show() by the worker thread."""

    def __init__(self, publisher, clock=time.monotonic):
        self._publisher = publisher
        self._clock = clock
        self._lock = threading.Lock()
        self._item: Optional[dict] = None
        self.published_frames = 0

    def show(self, frames: np.ndarray, times: np.ndarray, faces: np.ndarray, frame_id: str,
             overlays: list, rate: float, loop: bool) -> None:
        """Start playing frames (T, N, 3) at times (T,) s; overlays: contact markers sent with the
        DELETEALL; rate 0: show only the last frame. Called from the worker thread."""
        template = TriangleListTemplate(faces, frame_id)
        with self._lock:
            self._item = {"frames": frames, "times": np.asarray(times, float) - float(times[0]), "faces": faces,
                          "frame_id": frame_id, "overlays": overlays, "rate": float(rate), "loop": bool(loop),
                          "start": None, "shown": None, "template": template}

    def tick(self) -> None:
        """Publish the frame due now, if it changed (node timer, executor thread). Nothing is built
        while no one subscribes; a subscriber that appears gets the DELETEALL and overlays first."""
        with self._lock:
            item = self._item
            if item is None:
                return
            elapsed = playback_elapsed(item, self._clock)
            if self._publisher.get_subscription_count() == 0:
                item["shown"] = None
                return
            index = playback_index(item["times"], elapsed, item["rate"], item["loop"])
            if index == item["shown"]:
                return
            restart = item["shown"] is None or index < item["shown"]
            item["shown"] = index
        if restart:
            self._publisher.publish(MarkerArray(markers=[delete_all_marker(item["frame_id"])] + item["overlays"]))
        template = item["template"]
        if template.ok:
            self._publisher.publish(template.serialised(item["frames"][index]))
        else:
            self._publisher.publish(MarkerArray(markers=[frame_marker(item["frames"][index], item["faces"],
                                                                      item["frame_id"])]))
        self.published_frames += 1
