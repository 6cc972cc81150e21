"""Angles and distances between joint axes, for the articulation tests."""
from __future__ import annotations

import numpy as np


def angle(a, b) -> float:
    """Degrees (0-90) between two axis lines' directions (3,)."""
    return float(np.degrees(np.arccos(min(1.0, abs(a @ b) / np.linalg.norm(a) / np.linalg.norm(b)))))


def through(joint, point) -> float:
    """Distance of a point (3,) from a joint's axis line, in mesh units."""
    offset = np.asarray(point) - joint.origin
    return float(np.linalg.norm(offset - (offset @ joint.axis) * joint.axis))
