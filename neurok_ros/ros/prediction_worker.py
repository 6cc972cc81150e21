"""One worker thread, latest-only, and the per-mesh encoding cache. No rclpy here.

LatestOnlyWorker holds at most ONE waiting job per kind ("mesh", "action"): a job submitted while
another of its kind waits replaces it (the replaced one is counted as superseded and never runs),
so a burst of 100 actions builds no queue: the one in flight finishes, then only the latest runs.
Kinds are served in priority order, so a waiting mesh is taken before a waiting action and the
action then runs against the newest mesh.
"""
from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

import numpy as np


class LatestOnlyWorker:
    """handler(kind, job) runs on the worker thread, one job at a time; it must do its own error
    reporting (an exception escaping it is passed to on_error and the thread carries on).
    on_dropped(kind, job), when given, is called for every job that will never run: replaced by a
    newer one of its kind (on the submitting thread) or dropped by stop()."""

    def __init__(self, handler: Callable[[str, Any], None], kinds: Sequence[str] = ("mesh", "action"),
                 on_error: Optional[Callable[[str, BaseException], None]] = None, name: str = "neurok_worker",
                 on_dropped: Optional[Callable[[str, Any], None]] = None):
        self._handler = handler
        self._on_error = on_error
        self._on_dropped = on_dropped
        self._kinds = tuple(kinds)
        self._slots: dict[str, Any] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self._busy: Optional[str] = None
        self.submitted = {k: 0 for k in self._kinds}
        self.superseded = {k: 0 for k in self._kinds}
        self.processed = {k: 0 for k in self._kinds}
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, kind: str, job: Any) -> bool:
        """Put `job` in the slot of `kind`; True when it replaced a waiting job."""
        if kind not in self._kinds:
            raise ValueError(f"unknown job kind {kind!r}; expected one of {self._kinds}")
        with self._cond:
            replaced = kind in self._slots
            old = self._slots.get(kind)
            self._slots[kind] = job
            self.submitted[kind] += 1
            if replaced:
                self.superseded[kind] += 1
            self._cond.notify()
        if replaced and self._on_dropped is not None:
            self._on_dropped(kind, old)
        return replaced

    def withdraw(self, kind: str, job: Any) -> bool:
        """Take `job` out of the slot of `kind` if it still waits there (it will never run); True when it did."""
        with self._cond:
            if self._slots.get(kind) is not job:
                return False
            del self._slots[kind]
            self._cond.notify_all()
        return True

    def waiting(self, kind: Optional[str] = None) -> bool:
        """True when a job (of `kind`, or of any kind) waits."""
        with self._cond:
            return bool(self._slots) if kind is None else kind in self._slots

    @property
    def busy(self) -> Optional[str]:
        """The kind of the job running now, or None."""
        return self._busy

    def idle(self) -> bool:
        with self._cond:
            return self._busy is None and not self._slots

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing runs or waits; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy is not None or self._slots:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    def stop(self, timeout: float = 5.0) -> None:
        """Drop waiting jobs, let the running one finish (up to timeout), end the thread."""
        with self._cond:
            self._stopping = True
            dropped = list(self._slots.items())
            self._slots.clear()
            self._cond.notify_all()
        if self._on_dropped is not None:
            for kind, job in dropped:
                self._on_dropped(kind, job)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _take(self):
        with self._cond:
            while not self._stopping and not self._slots:
                self._cond.wait()
            if self._stopping:
                return None
            kind = next(k for k in self._kinds if k in self._slots)
            self._busy = kind
            return kind, self._slots.pop(kind)

    def _loop(self) -> None:
        while True:
            taken = self._take()
            if taken is None:
                return
            kind, job = taken
            try:
                self._handler(kind, job)
            except BaseException as exc:  # noqa: BLE001 - the worker must survive anything a job does
                if self._on_error is not None:
                    try:
                        self._on_error(kind, exc)
                    except Exception:
                        pass
            finally:
                with self._cond:
                    self.processed[kind] += 1
                    self._busy = None
                    self._cond.notify_all()


def mesh_key(vertices: np.ndarray, faces: np.ndarray) -> str:
    """Cache key of a mesh: SHA-1 of its float64 vertices and int64 faces (shape included)."""
    V = np.ascontiguousarray(vertices, dtype=np.float64)
    F = np.ascontiguousarray(faces, dtype=np.int64)
    digest = hashlib.sha1()
    digest.update(np.array(V.shape + F.shape, dtype=np.int64).tobytes())
    digest.update(V.tobytes())
    digest.update(F.tobytes())
    return digest.hexdigest()


class EncodingCache:
    """Least-recently-used map mesh key -> encoding (a NeuROKInstance), at most `capacity` entries
    (0 disables caching). Used from the worker thread only."""

    def __init__(self, capacity: int = 4):
        self.capacity = int(capacity)
        self._items: OrderedDict[str, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def get_or_encode(self, key: str, encode: Callable[[], Any]) -> tuple[Any, bool, float]:
        """(encoding, from_cache, seconds spent encoding now)."""
        if key in self._items:
            self._items.move_to_end(key)
            self.hits += 1
            return self._items[key], True, 0.0
        self.misses += 1
        started = time.perf_counter()
        value = encode()
        seconds = time.perf_counter() - started
        if self.capacity > 0:
            self._items[key] = value
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return value, False, seconds
