"""Contact conditions of one action: where the object is touched, how fast, optional drag path."""
from dataclasses import dataclass, field

import numpy as np

from neurok_ros.errors import ActionError


def _float_array(name: str, value) -> np.ndarray:
    try:
        return np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ActionError(f"{name} is not numeric: {exc}") from None


@dataclass(eq=False)
class ContactConditions:
    """C contacts, all in the mesh frame (metres, seconds).

    positions:      (C, 3) contact points on the object at t = 0, metres.
    velocities:     (C, 3) initial contact velocities, m/s.
    path_times:     (P,) times of the drag path targets, seconds after t = 0, >= 0 and strictly
                    increasing; empty when there is no drag path.
    path_positions: (P, C, 3) target position of every contact at each path time, metres; empty
                    (shape (0, C, 3)) when there is no drag path.
    """

    positions: np.ndarray
    velocities: np.ndarray
    path_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    path_positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3)))

    def __post_init__(self):
        self.positions = _float_array("positions", self.positions)
        self.velocities = _float_array("velocities", self.velocities)
        self.path_times = _float_array("path_times", self.path_times).reshape(-1)
        self.path_positions = _float_array("path_positions", self.path_positions)
        if self.path_times.size == 0 and self.path_positions.size == 0 and self.positions.ndim == 2:
            self.path_positions = np.zeros((0, self.positions.shape[0], 3))

    @property
    def num_contacts(self) -> int:
        """C, the number of contacts."""
        return int(self.positions.shape[0])

    @property
    def has_path(self) -> bool:
        """True when a drag path is given."""
        return self.path_times.size > 0

    def validate(self) -> "ContactConditions":
        """Raise ActionError naming the first problem; return self when usable."""
        p, v = self.positions, self.velocities
        if p.ndim != 2 or p.shape[1] != 3:
            raise ActionError(f"contact positions must have shape (C, 3), got {p.shape}")
        if p.shape[0] == 0:
            raise ActionError("no contacts: an action needs at least one contact position")
        if v.shape != p.shape:
            raise ActionError(
                f"contact velocities must match positions {p.shape}, got {v.shape}")
        if not np.all(np.isfinite(p)):
            raise ActionError("contact positions contain NaN or inf")
        if not np.all(np.isfinite(v)):
            raise ActionError("contact velocities contain NaN or inf")
        t, path = self.path_times, self.path_positions
        if path.shape != (t.size, p.shape[0], 3):
            raise ActionError(
                f"path_positions must have shape (P={t.size}, C={p.shape[0]}, 3), got {path.shape}")
        if t.size:
            if not np.all(np.isfinite(t)):
                raise ActionError("drag path times contain NaN or inf")
            if t[0] < 0:
                raise ActionError(f"drag path times must be >= 0 s, got {t[0]}")
            if np.any(np.diff(t) <= 0):
                raise ActionError("drag path times must be strictly increasing")
            if not np.all(np.isfinite(path)):
                raise ActionError("drag path positions contain NaN or inf")
        return self
