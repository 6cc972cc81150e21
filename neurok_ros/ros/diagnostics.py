"""The node's /diagnostics: two DiagnosticStatus entries per DiagnosticArray.

"<node>: state"  the model and worker: level WARN while loading or without topics (the lifecycle's
                 unconfigured, inactive, finalized), OK when ready or busy, ERROR when
                 the model failed to load or the last prediction failed; message "loading",
                 "ready", "busy: encoding mesh", "busy: simulating" or "error: <reason>"; values:
                 model, mesh and last-prediction facts and timings (seconds), counters.
"<node>: input"  the last input event: OK "accepted ...", WARN "accepted ... (decimated ...)",
                 ERROR "rejected <topic>: <reason>". An ERROR stays until an input is accepted.
                 values: topic, reason, input_stamp (sec.nanosec of the input's header.stamp, so a
                 client can tell which of its messages was refused), rejected_total.
Every rejected input is published at once (not only on the periodic timer).
"""
from __future__ import annotations

import threading
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

HARDWARE_ID = "neurok"
OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
LEVEL_NAMES = {OK: "OK", WARN: "WARN", ERROR: "ERROR", DiagnosticStatus.STALE: "STALE"}


def stamp_text(stamp) -> str:
    """builtin_interfaces/Time -> "sec.nanosec" (9 digits), the form used in diagnostic values."""
    return f"{int(stamp.sec)}.{int(stamp.nanosec):09d}"


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def energy_text(energy) -> str:
    """(T, 3) joules (kinetic, potential, total) -> "T0,V0,E0;T1,V1,E1;..." (6 significant digits),
    the form of the `last_energy_j` diagnostic value."""
    return ";".join(",".join(f"{float(v):.6g}" for v in row) for row in energy)


def parse_energy_text(text: str):
    """Inverse of energy_text: (T, 3) float64, or None for an empty or malformed value."""
    import numpy as np

    try:
        rows = [[float(v) for v in row.split(",")] for row in text.split(";") if row]
        energy = np.asarray(rows, dtype=np.float64)
    except ValueError:
        return None
    return energy if energy.ndim == 2 and energy.shape[1] == 3 and len(energy) else None


class NodeStatus:
    """Thread-safe status of the node (the worker and the callbacks both update it)."""

    def __init__(self, node_name: str):
        self.state_name = f"{node_name}: state"
        self.input_name = f"{node_name}: input"
        self._lock = threading.Lock()
        self._state = "loading"
        self._state_detail = ""
        self._values: dict = {}
        self._input = (OK, "no input yet", {"topic": "", "reason": "", "input_stamp": ""})
        self.rejected_total = 0

    # --- updates ---
    def set_state(self, state: str, detail: str = "", **values) -> None:
        """state: loading, ready, busy or error; values are merged into the state's key-values."""
        with self._lock:
            self._state, self._state_detail = state, detail
            self._values.update(values)

    def update(self, **values) -> None:
        with self._lock:
            self._values.update(values)

    def accepted(self, topic: str, what: str, stamp_str: str, warning: str = "") -> None:
        with self._lock:
            level = WARN if warning else OK
            message = f"accepted {topic}: {what}" + (f" ({warning})" if warning else "")
            self._input = (level, message, {"topic": topic, "reason": warning, "input_stamp": stamp_str})

    def rejected(self, topic: str, reason: str, stamp_str: str) -> None:
        with self._lock:
            self.rejected_total += 1
            self._input = (ERROR, f"rejected {topic}: {reason}",
                           {"topic": topic, "reason": reason, "input_stamp": stamp_str})

    # --- reading ---
    @property
    def state(self) -> str:
        return self._state

    def value(self, key: str, default=None):
        with self._lock:
            return self._values.get(key, default)

    def to_array(self, stamp) -> DiagnosticArray:
        with self._lock:
            state, detail, values = self._state, self._state_detail, dict(self._values)
            in_level, in_message, in_values = self._input
            rejected = self.rejected_total
        level = {"loading": WARN, "ready": OK, "busy": OK, "unconfigured": WARN, "inactive": WARN,
                 "finalized": WARN}.get(state, ERROR)  # the lifecycle states without topics: WARN
        message = state + (f": {detail}" if detail else "")
        state_status = DiagnosticStatus(level=level, name=self.state_name, message=message, hardware_id=HARDWARE_ID,
                                        values=[KeyValue(key="state", value=state)]
                                        + [KeyValue(key=k, value=_text(v)) for k, v in sorted(values.items())])
        input_status = DiagnosticStatus(level=in_level, name=self.input_name, message=in_message,
                                        hardware_id=HARDWARE_ID,
                                        values=[KeyValue(key=k, value=_text(v)) for k, v in in_values.items()]
                                        + [KeyValue(key="rejected_total", value=str(rejected))])
        array = DiagnosticArray()
        array.header.stamp = stamp
        array.status = [state_status, input_status]
        return array


def status_values(status: DiagnosticStatus) -> dict:
    """{key: value} of a DiagnosticStatus."""
    return {kv.key: kv.value for kv in status.values}


def find_status(array: DiagnosticArray, name: str) -> Optional[DiagnosticStatus]:
    """The status called `name` in a DiagnosticArray, or None."""
    return next((s for s in array.status if s.name == name), None)
