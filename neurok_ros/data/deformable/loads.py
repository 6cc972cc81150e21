"""External loads for flex simulations: smooth time profiles, forces on vertex sets, aerodynamic
wind on a triangle sheet, and smooth grip paths. Units: seconds, metres, newtons."""
from __future__ import annotations

import numpy as np


def smoothstep(s):
    """0 for s <= 0, 1 for s >= 1, C1-smooth cubic in between (scalar or array)."""
    s = np.clip(s, 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def pulse(t: float, start: float, rise: float, stop: float | None = None) -> float:
    """Load factor in [0, 1]: ramps up over `rise` s from `start`, holds, and ramps down over
    `rise` s from `stop` (never, if stop is None)."""
    up = smoothstep((t - start) / max(rise, 1e-9))
    if stop is None:
        return float(up)
    return float(up * (1.0 - smoothstep((t - stop) / max(rise, 1e-9))))


def vertex_force(ids, total_force, start: float, rise: float, stop: float | None = None):
    """Force field putting `total_force` (3,) N, split equally, on the vertices `ids`, with a
    `pulse` time profile. Returns f(t, x (n,3), v (n,3)) -> (n, 3)."""
    ids = np.asarray(ids, dtype=np.int64)
    per_vertex = np.asarray(total_force, dtype=np.float64) / max(len(ids), 1)

    def field(t, x, v):
        out = np.zeros_like(x)
        out[ids] = pulse(t, start, rise, stop) * per_vertex
        return out

    return field


def sheet_wind(triangles, wind_velocity, air_density: float = 1.2, drag: float = 1.2,
               gust_amplitude: float = 0.0, gust_frequency: float = 1.0, gust_phase: float = 0.0,
               start: float = 0.0, rise: float = 0.2):
    """Aerodynamic pressure of wind on a triangle sheet (both sides).

    Each triangle of area A and unit normal n feels 0.5 * rho * C_d * A * (u . n)|u . n| n, with u
    the wind velocity relative to the triangle's mean vertex velocity; the force is split over its
    three vertices. The wind (3,) m/s is modulated by (1 + gust_amplitude * sin(2 pi f t + phase))
    and ramped in with `pulse`. Returns f(t, x (n,3), v (n,3)) -> (n, 3) N.
    """
    triangles = np.asarray(triangles, dtype=np.int64)
    wind_velocity = np.asarray(wind_velocity, dtype=np.float64)

    def field(t, x, v):
        gain = pulse(t, start, rise) * (1.0 + gust_amplitude * np.sin(2 * np.pi * gust_frequency * t + gust_phase))
        p0, p1, p2 = x[triangles[:, 0]], x[triangles[:, 1]], x[triangles[:, 2]]
        cross = np.cross(p1 - p0, p2 - p0)
        double_area = np.linalg.norm(cross, axis=1, keepdims=True)
        normal = cross / np.maximum(double_area, 1e-12)
        relative = gain * wind_velocity - v[triangles].mean(axis=1)
        normal_speed = np.einsum("ij,ij->i", relative, normal)[:, None]
        force = 0.5 * air_density * drag * (0.5 * double_area) * normal_speed * np.abs(normal_speed) * normal
        out = np.zeros_like(x)
        np.add.at(out, triangles.ravel(), np.repeat(force / 3.0, 3, axis=0))
        return out

    return field


def waypoint_path(waypoints, duration: float):
    """Grip path through displacements waypoints (k, 3) m (the first should be 0), reached at even
    times over `duration` s with smoothstep easing between them; held after. Returns path(t) -> (3,)."""
    waypoints = np.asarray(waypoints, dtype=np.float64)
    segments = len(waypoints) - 1

    def path(t):
        s = np.clip(t / duration, 0.0, 1.0) * segments
        k = min(int(s), segments - 1)
        return waypoints[k] + smoothstep(s - k) * (waypoints[k + 1] - waypoints[k])

    return path
