"""Random parameter draws shared by the deformable generators (all from one numpy Generator)."""
from __future__ import annotations

import numpy as np


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """A value whose logarithm is uniform on [log low, log high]."""
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


def unit_horizontal(rng: np.random.Generator) -> np.ndarray:
    """A random unit vector in the xy plane, (3,)."""
    angle = rng.uniform(0.0, 2.0 * np.pi)
    return np.array([np.cos(angle), np.sin(angle), 0.0])
