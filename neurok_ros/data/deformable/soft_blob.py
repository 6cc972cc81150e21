"""soft_blob: a soft ball, box or puck (foam, jelly, silicone) either dropped onto the ground (with
sideways velocity and spin, landing on any face or edge) or (box, puck) glued to the ground by its
base and squeezed/sheared by a push on its top that is held or released (jelly wobble).

Frame: ground plane z = 0, gravity -z, the blob centred on the z axis. Physics: MuJoCo flex with
dof="full" (linear tetrahedra, every point free) and flex-plane contact for drops. Interpolated
(quadratic, 2+ cells) blobs were seen to explode on impact with the ground, so they are not used
here. Lengths in metres.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from neurok_ros.data.deformable.assemble import recording_to_instance
from neurok_ros.data.deformable.flex_meshes import (
    cube_to_ball,
    grid_points,
    grid_tetrahedra,
    rotation_matrix,
    square_to_disc,
)
from neurok_ros.data.deformable.loads import vertex_force
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

CATEGORY = "soft_blob"
GRAVITY = 9.81
SHAPES = ("ball", "box", "puck")


def blob_mesh(shape: str, size, points: int = 8) -> tuple[np.ndarray, np.ndarray, float]:
    """Tetrahedralised blob centred at 0: points (n, 3), tets (m, 4), volume m^3.

    size (3,) full extents in metres (ball: ellipsoid diameters; puck: disc diameters and height);
    `points` grid points per axis (fewer along a short axis)."""
    size = np.asarray(size, dtype=np.float64)
    count = tuple(int(max(6, round(points * s / size.max()))) for s in size)
    unit = grid_points(count, (2.0, 2.0, 2.0))
    if shape == "ball":
        unit = cube_to_ball(unit)
        volume = np.pi / 6 * np.prod(size)
    elif shape == "puck":
        unit = square_to_disc(unit)
        volume = np.pi / 4 * np.prod(size)
    elif shape == "box":
        volume = float(np.prod(size))
    else:
        raise ValueError(f"unknown blob shape {shape!r}; expected one of {SHAPES}")
    return unit * (0.5 * size), grid_tetrahedra(count), volume


def blob_recording(shape: str, size, young: float, poisson: float, damping: float, density: float,
                   scenario: str = "drop", tilt_axis=(1.0, 0.0, 0.0), tilt: float = 0.0,
                   drop_height: float = 0.1, velocity=(0.0, 0.0, 0.0), spin=(0.0, 0.0, 0.0),
                   push=(0.0, 0.0, 0.0), push_start: float = 0.1, push_rise: float = 0.1,
                   push_stop: float | None = None, friction: float = 0.8, points: int = 8, dof: str = "full",
                   cells: int = 1, duration: float = 1.5, num_frames: int = 16,
                   timestep: float = 0.01) -> FlexRecording:
    """Simulate the blob. young Pa, density kg/m^3, damping s; `points` grid points along the
    longest side; dof "full" (default) or "quadratic" with `cells` cells per axis.

    scenario "drop": the blob, turned by `tilt` rad about `tilt_axis`, starts `drop_height` m above
    the ground with `velocity` m/s and `spin` rad/s. scenario "glued": it stands on the ground with
    its base pinned and a push (3,) N is spread over its upper third (smooth on, optional off)."""
    local, tets, volume = blob_mesh(shape, size, points)
    if scenario == "drop":
        local = local @ rotation_matrix(tilt_axis, tilt).T
    local[:, 2] -= local[:, 2].min()
    if scenario == "drop":
        local[:, 2] += drop_height
    body = FlexBody(points=local, elements=tets, dim=3, mass=density * volume, young=young, poisson=poisson,
                    damping=damping, radius=0.002, dof=dof, cellcount=(cells, cells, cells),
                    velocity=tuple(velocity), spin=tuple(spin))
    forces = None
    if scenario == "glued":
        nodes = dof_positions(body)
        base = nodes[:, 2].min() + (1e-9 if body.interpolated else 0.08 * (local[:, 2].max() - local[:, 2].min()))
        body = replace(body, pinned=nodes[:, 2] <= base)
        top = np.flatnonzero(local[:, 2] >= local[:, 2].max() * (2.0 / 3.0))
        forces = vertex_force(top, push, push_start, push_rise, push_stop)
        loads = FlexLoads(gravity=(0.0, 0.0, -GRAVITY), forces=forces)
    elif scenario == "drop":
        loads = FlexLoads(gravity=(0.0, 0.0, -GRAVITY), ground_height=0.0, friction=friction)
    else:
        raise ValueError(f"unknown blob scenario {scenario!r}; expected 'drop' or 'glued'")
    extent = float(np.linalg.norm(np.asarray(size)))
    settings = SimSettings(timestep=timestep, max_displacement=3.0 * extent + duration * (
        1.0 + float(np.linalg.norm(velocity))))
    return simulate_flex(body, loads, settings, duration, num_frames)


def sample_blob_params(rng: np.random.Generator) -> dict:
    """Random blob: shape, size, soft material, scenario.

    Young's modulus gives 4-12 % strain under the blob's own weight and keeps the estimated impact
    strain of a drop below ~35 %: Saint Venant-Kirchhoff elements collapse under larger compression."""
    shape = str(rng.choice(SHAPES))
    base = rng.uniform(0.08, 0.2)
    if shape == "puck":
        size = [base, base * rng.uniform(0.7, 1.0), base * rng.uniform(0.3, 0.7)]
    else:
        size = [base, base * rng.uniform(0.6, 1.0), base * rng.uniform(0.5, 1.0)]
    density = rng.uniform(150.0, 1200.0)
    strain = log_uniform(rng, 0.04, 0.12)
    young = density * GRAVITY * max(size) / strain
    # A ball glued by a small base cap folds over at its neck, so balls are only dropped.
    scenario = "drop" if shape == "ball" else str(rng.choice(["drop", "glued"]))
    params = dict(shape=shape, size=size, young=young, poisson=rng.uniform(0.2, 0.45),
                  damping=log_uniform(rng, 0.003, 0.03), density=density, scenario=scenario,
                  points=int(rng.choice([7, 8])), duration=rng.uniform(1.0, 2.0))
    if scenario == "drop":
        axis = rng.normal(size=3)
        drop_height = rng.uniform(0.02, 0.25)
        speed = rng.uniform(0.0, 0.6)
        params.update(tilt_axis=(axis / np.linalg.norm(axis)).tolist(), tilt=rng.uniform(0.0, np.pi),
                      drop_height=drop_height, velocity=(speed * unit_horizontal(rng)).tolist(),
                      spin=rng.uniform(-3.0, 3.0, size=3).tolist(), friction=rng.uniform(0.4, 1.0))
        # impact strain ~ sqrt(2 rho g h_eff / E) <= 0.35
        params["young"] = max(young, 16.0 * density * (GRAVITY * drop_height + 0.5 * speed ** 2))
    else:
        # Push giving a nominal shear (and squeeze) strain of 5-12 %: F = strain * G * footprint
        # (about twice that on the top face; Saint Venant-Kirchhoff creeps into collapse from ~20 %).
        shear_modulus = young / (2.0 * (1.0 + params["poisson"]))
        footprint = size[0] * size[1] * (np.pi / 4 if shape != "box" else 1.0)
        direction = unit_horizontal(rng) + np.array([0.0, 0.0, -rng.uniform(0.0, 0.7)])
        direction /= np.linalg.norm(direction)
        start = rng.uniform(0.0, 0.3)
        rise = rng.uniform(0.05, 0.2)
        magnitude = log_uniform(rng, 0.05, 0.12) * shear_modulus * footprint
        params.update(push=(magnitude * direction).tolist(), push_start=start, push_rise=rise,
                      push_stop=start + rise + rng.uniform(0.1, 0.5) if rng.uniform() < 0.6 else None)
    return params


def blob_instance(seed: int, num_frames: int, params: dict) -> Instance:
    """Instance from explicit parameters (the keyword arguments of `blob_recording`)."""
    recording = blob_recording(num_frames=num_frames, **params)
    return recording_to_instance(recording, CATEGORY, "elastic", seed, params)


def generate(seed: int, num_frames: int) -> Instance:
    """One random soft blob instance, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    return blob_instance(seed, num_frames, sample_blob_params(rng))
