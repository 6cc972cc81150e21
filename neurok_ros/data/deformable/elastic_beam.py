"""elastic_beam: a soft cantilever (rubber/silicone/foam bar) clamped at x = 0, sagging under gravity
from straight, loaded at the tip (held or released force), or pulled along a path by its tip.

Physics: MuJoCo flex with dof="quadratic" (3-6 quadratic cells along the beam): bending without
the shear locking of linear tetrahedra, and a well-conditioned implicit solve; the render surface is
the boundary of a finer tetrahedral grid that follows the interpolation.

Beam frame: axis along +x from the clamp (x = 0) to the tip (x = length), cross-section centred on
y = 0, z = 0; gravity -z. All lengths in metres.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.data.deformable.assemble import recording_to_instance
from neurok_ros.data.deformable.flex_meshes import grid_points, grid_tetrahedra
from neurok_ros.data.deformable.loads import vertex_force, waypoint_path
from neurok_ros.data.deformable.mujoco_flex import (
    FlexBody,
    FlexLoads,
    FlexRecording,
    Grip,
    SimSettings,
    dof_positions,
    simulate_flex,
)
from neurok_ros.data.deformable.sampling import log_uniform
from neurok_ros.data.instance_format import Instance

CATEGORY = "elastic_beam"
GRAVITY = 9.81


def beam_mesh(length: float, width: float, height: float, points_across: int = 4,
              max_points_along: int = 24) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Tetrahedralised bar: points (n, 3), tets (m, 4), grid count (nx, ny, nz).

    Cells along the beam are at most ~1.3x longer than across, with at most `max_points_along`."""
    across = max(width, height) / (points_across - 1)
    nx = int(np.clip(np.ceil(length / (1.3 * across)) + 1, 10, max_points_along))
    count = (nx, points_across, points_across)
    points = grid_points(count, (length, width, height))
    points[:, 0] += 0.5 * length
    return points, grid_tetrahedra(count), count


def beam_recording(length: float, width: float, height: float, young: float, poisson: float,
                   damping: float, density: float, tip_force=(0.0, 0.0, 0.0), force_start: float = 0.1,
                   force_rise: float = 0.15, force_stop: float | None = None, tip_path=None,
                   path_time: float = 1.0, points_across: int = 4, duration: float = 1.5,
                   num_frames: int = 16, timestep: float = 0.01) -> FlexRecording:
    """Simulate the cantilever. young Pa, density kg/m^3, damping s (Rayleigh), tip_force (3,) N
    spread over the tip face with a smooth on (and optional off) ramp; tip_path: optional grip
    waypoints (k, 3) m (first = 0) followed over `path_time` s by the tip face."""
    points, tets, _ = beam_mesh(length, width, height, points_across)
    cells = int(np.clip(np.round(length / (2.0 * max(width, height))), 3, 6))
    body = FlexBody(points=points, elements=tets, dim=3, mass=density * length * width * height,
                    young=young, poisson=poisson, damping=damping, dof="quadratic", cellcount=(cells, 1, 1))
    nodes = dof_positions(body)
    body = replace(body, pinned=nodes[:, 0] <= 1e-9)
    tip = np.flatnonzero(points[:, 0] >= length - 1e-9)
    forces = None
    if np.any(np.asarray(tip_force) != 0):
        forces = vertex_force(tip, tip_force, force_start, force_rise, force_stop)
    grips = ()
    if tip_path is not None:
        tip_nodes = np.flatnonzero(nodes[:, 0] >= length - 1e-9)
        grips = (Grip(tuple(tip_nodes.tolist()), waypoint_path(tip_path, path_time)),)
    loads = FlexLoads(gravity=(0.0, 0.0, -GRAVITY), forces=forces, grips=grips)
    settings = SimSettings(timestep=timestep, max_displacement=3.0 * length)
    return simulate_flex(body, loads, settings, duration, num_frames)


def sample_beam_params(rng: np.random.Generator) -> dict:
    """Random beam: size, material, and one of four load cases."""
    length = rng.uniform(0.3, 0.8)
    height = rng.uniform(0.03, 0.07)
    width = height * rng.uniform(0.8, 2.0)
    density = rng.uniform(300.0, 1300.0)
    # Young's modulus from a target nominal sag/length under self weight (Euler-Bernoulli),
    # so every beam visibly bends without folding onto itself.
    sag_ratio = log_uniform(rng, 0.15, 0.5)
    young = float(np.clip(1.5 * density * GRAVITY * length ** 3 / (sag_ratio * height ** 2), 2e4, 5e7))
    weight = density * length * width * height * GRAVITY
    params = dict(length=length, width=width, height=height, young=young, poisson=rng.uniform(0.25, 0.45),
                  damping=log_uniform(rng, 0.002, 0.02), density=density,
                  points_across=int(rng.choice([4, 5])), duration=rng.uniform(1.0, 2.0))
    load = str(rng.choice(["gravity", "tip_hold", "tip_release", "tip_pull"]))
    params["load"] = load
    if load in ("tip_hold", "tip_release"):
        angle = rng.uniform(0.0, 0.5 * np.pi) * rng.choice([-1.0, 1.0])  # from straight down to sideways
        direction = np.array([0.0, np.sin(angle), -np.cos(angle)])
        params["tip_force"] = (rng.uniform(0.2, 0.6) * weight * direction).tolist()
        params["force_start"] = rng.uniform(0.0, 0.3)
        params["force_rise"] = rng.uniform(0.05, 0.25)
        if load == "tip_release":
            params["force_stop"] = params["force_start"] + params["force_rise"] + rng.uniform(0.2, 0.5)
    elif load == "tip_pull":
        lift = rng.uniform(0.1, 0.35) * length
        side = rng.uniform(-0.25, 0.25) * length
        params["tip_path"] = [[0.0, 0.0, 0.0], [0.0, 0.5 * side, lift], [-0.05 * length, side, 0.3 * lift]]
        params["path_time"] = rng.uniform(0.6, 1.0) * params["duration"]
    return params


def beam_instance(seed: int, num_frames: int, params: dict) -> Instance:
    """Instance from explicit parameters (the keyword arguments of `beam_recording` plus "load")."""
    kwargs = {k: v for k, v in params.items() if k != "load"}
    recording = beam_recording(num_frames=num_frames, **kwargs)
    return recording_to_instance(recording, CATEGORY, "elastic", seed, params)


def generate(seed: int, num_frames: int) -> Instance:
    """One random elastic beam instance, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    return beam_instance(seed, num_frames, sample_beam_params(rng))
