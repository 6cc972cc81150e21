"""soft_stem: a vertical soft stem (plant stalk, silicone finger, foam pole) clamped at its base,
swaying after a side push on its upper part (a held push, a released push, or a gust that oscillates).

Stem frame: round cross-section centred on the z axis, base at z = 0, top at z = height; gravity -z.
Physics: MuJoCo flex with dof="quadratic" cells stacked along z; Young's modulus is drawn above the
self-weight buckling limit so the stem stands. Lengths in metres.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.data.deformable.assemble import recording_to_instance
from neurok_ros.data.deformable.flex_meshes import grid_points, grid_tetrahedra, square_to_disc
from neurok_ros.data.deformable.loads import pulse
from neurok_ros.data.deformable.mujoco_flex import (
    FlexBody,
    FlexLoads,
    FlexRecording,
    SimSettings,
    dof_positions,
    simulate_flex,
)
from neurok_ros.data.deformable.sampling import log_uniform, unit_horizontal
from neurok_ros.data.instance_format import Instance

CATEGORY = "soft_stem"
GRAVITY = 9.81


def stem_mesh(height: float, radius: float, points_across: int = 5,
              max_points_along: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Tetrahedralised round rod: points (n, 3) with the base at z = 0, tets (m, 4)."""
    across = 2 * radius / (points_across - 1)
    nz = int(np.clip(np.ceil(height / (1.3 * across)) + 1, 10, max_points_along))
    count = (points_across, points_across, nz)
    points = grid_points(count, (2.0, 2.0, height))
    points = square_to_disc(points)
    points[:, :2] *= radius
    points[:, 2] += 0.5 * height
    return points, grid_tetrahedra(count)


def push_force(ids, force, start: float, rise: float, stop: float | None, gust_frequency: float = 0.0):
    """Side push of total force (3,) N on vertices `ids`: a smooth pulse, times cos(2 pi f t') when
    gust_frequency f > 0 (t' = time since start). Returns f(t, x, v) -> (n, 3) N."""
    ids = np.asarray(ids, dtype=np.int64)
    per_vertex = np.asarray(force, dtype=np.float64) / len(ids)

    def field(t, x, v):
        gain = pulse(t, start, rise, stop)
        if gust_frequency > 0:
            gain *= np.cos(2 * np.pi * gust_frequency * max(t - start, 0.0))
        out = np.zeros_like(x)
        out[ids] = gain * per_vertex
        return out

    return field


def stem_recording(height: float, radius: float, young: float, poisson: float, damping: float,
                   density: float, push=(0.0, 0.0, 0.0), push_from: float = 0.7, push_start: float = 0.1,
                   push_rise: float = 0.1, push_stop: float | None = None, gust_frequency: float = 0.0,
                   points_across: int = 5, cells: int = 4, duration: float = 1.5, num_frames: int = 16,
                   timestep: float = 0.01) -> FlexRecording:
    """Simulate the stem. young Pa, density kg/m^3, damping s; push (3,) N total horizontal force on
    the vertices above push_from * height, with a smooth on/off profile (see `push_force`)."""
    points, tets = stem_mesh(height, radius, points_across)
    body = FlexBody(points=points, elements=tets, dim=3, mass=density * np.pi * radius ** 2 * height,
                    young=young, poisson=poisson, damping=damping, dof="quadratic", cellcount=(1, 1, cells))
    body = replace(body, pinned=dof_positions(body)[:, 2] <= 1e-9)
    forces = None
    if np.any(np.asarray(push) != 0):
        forces = push_force(np.flatnonzero(points[:, 2] >= push_from * height - 1e-9), push, push_start,
                            push_rise, push_stop, gust_frequency)
    loads = FlexLoads(gravity=(0.0, 0.0, -GRAVITY), forces=forces)
    settings = SimSettings(timestep=timestep, max_displacement=3.0 * height)
    return simulate_flex(body, loads, settings, duration, num_frames)


def sample_stem_params(rng: np.random.Generator) -> dict:
    """Random stem: size, material above the buckling limit, and a push case."""
    height = rng.uniform(0.2, 0.6)
    radius = height / rng.uniform(8.0, 16.0)
    density = rng.uniform(300.0, 1200.0)
    # Self-weight buckling of a clamped column: E_crit = rho g A (H)^3 / (7.837 I), I/A = r^2 / 4.
    young_critical = 4.0 * density * GRAVITY * height ** 3 / (7.837 * radius ** 2)
    young = young_critical * log_uniform(rng, 4.0, 30.0)
    # Push giving a nominal static top deflection of 10-40 % of the height (cantilever, load at top).
    inertia = np.pi * radius ** 4 / 4
    deflection = rng.uniform(0.1, 0.4) * height
    push_magnitude = 3.0 * young * inertia * deflection / height ** 3
    load = str(rng.choice(["push_hold", "push_release", "gust"]))
    start = rng.uniform(0.0, 0.3)
    rise = rng.uniform(0.05, 0.2)
    return dict(height=height, radius=radius, young=young, poisson=rng.uniform(0.25, 0.45),
                damping=log_uniform(rng, 0.002, 0.02), density=density,
                push=(push_magnitude * unit_horizontal(rng)).tolist(), push_from=rng.uniform(0.6, 0.9),
                push_start=start, push_rise=rise,
                push_stop=None if load in ("push_hold", "gust") else start + rise + rng.uniform(0.1, 0.5),
                gust_frequency=rng.uniform(0.8, 2.5) if load == "gust" else 0.0,
                points_across=int(rng.choice([4, 5])), cells=int(rng.choice([3, 4])),
                duration=rng.uniform(1.0, 2.0), load=load)


def stem_instance(seed: int, num_frames: int, params: dict) -> Instance:
    """Instance from explicit parameters (the keyword arguments of `stem_recording` plus "load")."""
    kwargs = {k: v for k, v in params.items() if k != "load"}
    recording = stem_recording(num_frames=num_frames, **kwargs)
    return recording_to_instance(recording, CATEGORY, "elastic", seed, params)


def generate(seed: int, num_frames: int) -> Instance:
    """One random soft stem instance, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    return stem_instance(seed, num_frames, sample_stem_params(rng))
