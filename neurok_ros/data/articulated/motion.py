"""Smooth random joint trajectories, and the common last step of every category generator.

A trajectory starts at the rest state and moves some joints towards random targets inside their
ranges, each with its own timing (start, duration, speed profile); the rest joints hold still.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from neurok_ros.data.articulated.kinematic_tree import ArticulatedObject, make_instance
from neurok_ros.data.instance_format import Instance

FPS = 30.0
GENERATOR_VERSION = "1"
PROFILES = ("smoothstep", "min_jerk", "cosine", "constant", "there_and_back", "two_stage")


def profile(kind: str, s: np.ndarray) -> np.ndarray:
    """Progress in [0, 1] for normalised time s (T,) in [0, 1]; 'there_and_back' returns to 0."""
    s = np.clip(s, 0.0, 1.0)
    if kind == "smoothstep":
        return s * s * (3 - 2 * s)
    if kind == "min_jerk":
        return s ** 3 * (10 - 15 * s + 6 * s * s)
    if kind == "cosine":
        return 0.5 - 0.5 * np.cos(np.pi * s)
    if kind == "constant":
        return s
    if kind == "there_and_back":
        return np.sin(np.pi * s) ** 2
    raise ValueError(f"unknown profile {kind!r}")


def sample_target(rng: np.random.Generator, start: float, lo: float, hi: float, min_fraction: float) -> float:
    """A value in [lo, hi] at least min_fraction * (hi - lo) away from `start` (min_fraction <= 0.5)."""
    gap = min_fraction * (hi - lo)
    below = max(0.0, start - gap - lo)
    above = max(0.0, hi - start - gap)
    u = rng.uniform(0.0, below + above)
    return lo + u if u < below else start + gap + (u - below)


def sample_trajectory(rng: np.random.Generator, rest, ranges, num_frames: int, primary=None,
                      p_move: float = 0.6, min_fraction: float = 0.3) -> tuple[np.ndarray, list[dict]]:
    """Joint trajectory (T, J) float64 starting at `rest` (J,), inside `ranges` (J, 2).

    Each joint moves with probability p_move; at least one joint of `primary` (default: all) moves.
    Returns the trajectory and one description dict per joint (profile, timing, targets).
    """
    rest = np.asarray(rest, float)
    ranges = np.asarray(ranges, float).reshape(-1, 2)
    J = len(rest)
    traj = np.repeat(rest[None], num_frames, axis=0)
    info = [{"moving": False} for _ in range(J)]
    if J == 0:
        return traj, info
    moving = rng.random(J) < p_move
    candidates = np.arange(J) if primary is None else np.asarray(primary)
    forced = int(rng.choice(candidates))
    moving[forced] = True
    s = np.linspace(0.0, 1.0, num_frames)
    for j in np.flatnonzero(moving):
        lo, hi = ranges[j]
        kind = str(rng.choice(PROFILES))
        start = rng.uniform(0.0, 0.35)
        if j == forced:  # the forced joint completes a large move inside the clip
            end = rng.uniform(start + 0.45, 1.0)
            gap = max(min_fraction, 0.4)
        else:  # may end past 1: still moving when the clip stops
            end = start + rng.uniform(0.45, 1.3)
            gap = min_fraction
        local = (s - start) / (end - start)
        target = sample_target(rng, rest[j], lo, hi, gap)
        if kind == "two_stage":
            mid = rng.uniform(0.35, 0.65)
            via = sample_target(rng, rest[j], lo, hi, gap)
            first = profile("min_jerk", local / mid)
            second = profile("min_jerk", (local - mid) / (1 - mid))
            values = rest[j] + (via - rest[j]) * first + (target - via) * second
            info[j] = {"via": float(via)}
        else:
            values = rest[j] + (target - rest[j]) * profile(kind, local)
            info[j] = {}
        traj[:, j] = np.clip(values, lo, hi)
        info[j].update({"moving": True, "profile": kind, "start": float(start), "end": float(end),
                        "target": float(target)})
    return traj, info


def sample_rest(rng: np.random.Generator, ranges, closed_prob: float = 0.25) -> np.ndarray:
    """A random joint state (J,) in `ranges` (J, 2); each joint sits at its lower limit with closed_prob."""
    ranges = np.asarray(ranges, float).reshape(-1, 2)
    rest = rng.uniform(ranges[:, 0], ranges[:, 1])
    closed = rng.random(len(rest)) < closed_prob
    return np.where(closed, ranges[:, 0], rest)


def animate(obj: ArticulatedObject, rng: np.random.Generator, num_frames: int, category: str, seed: int,
            params: dict, primary=None, p_move: float = 0.6, closed_prob: float = 0.25,
            constraint: Callable[[np.ndarray], np.ndarray] | None = None) -> Instance:
    """Sample a rest state and a trajectory for `obj` and export the instance at FPS frames per second.

    constraint: optional map applied to joint states (..., J) (e.g. a screw coupling), in range.
    """
    if num_frames < 2:
        raise ValueError(f"num_frames must be >= 2, got {num_frames}")
    ranges = obj.ranges
    rest = sample_rest(rng, ranges, closed_prob)
    if constraint is not None:
        rest = constraint(rest)
    traj, motion = sample_trajectory(rng, rest, ranges, num_frames, primary, p_move)
    if constraint is not None:
        traj = constraint(traj)
    generator = {
        "name": f"articulated.{category}",
        "version": GENERATOR_VERSION,
        "seed": int(seed),
        "params": {**params, "fps": FPS, "motion": motion},
    }
    times = np.arange(num_frames) / FPS
    return make_instance(obj, traj, times, category, generator, rest)


def uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    """One float drawn uniformly from [lo, hi) (a plain Python float, JSON-serialisable)."""
    return float(rng.uniform(lo, hi))
