"""cloth_hanging: a cloth (towel, curtain, flag) pinned along its top edge or at its two top corners
(each corner held like a clothes peg: the corner point and its two edge neighbours), released from a
tilt so it swings down under gravity, optionally in a light breeze.

Frame: the top edge runs along x at height z = 0 (pinned points stay exactly there), the cloth hangs
towards -z; gravity -z. Physics: MuJoCo dim=2 flex (triangles), elastic2d="both" (membrane +
bending, Kirchhoff plate normalisation), no contact. Lengths in metres.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.deformable.assemble import recording_to_instance
from neurok_ros.data.deformable.flex_meshes import sheet_corner_pinch, sheet_points, sheet_triangles
from neurok_ros.data.deformable.loads import sheet_wind
from neurok_ros.data.deformable.mujoco_flex import FlexBody, FlexLoads, FlexRecording, SimSettings, simulate_flex
from neurok_ros.data.deformable.sampling import log_uniform
from neurok_ros.data.instance_format import Instance

CATEGORY = "cloth_hanging"
GRAVITY = 9.81


def grid_count(width: float, height: float, max_points: int, min_points: int = 10) -> tuple[int, int]:
    """Points (across, down) of a sheet with near-square cells: max_points along the longer side,
    at least min_points along the shorter one."""
    if width >= height:
        return max_points, int(max(min_points, round(max_points * height / width)))
    return int(max(min_points, round(max_points * width / height))), max_points


def hanging_sheet(width: float, height: float, tilt: float, count) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat sheet hanging from its top edge (along x, at z = 0), turned up by `tilt` rad about x.

    Returns points (nu*nv, 3), triangles (F, 3), and the ids of the top-edge points in x order.
    The top edge is the sheet's +v side, so its corners are `sheet_corner_pinch` corners 2 and 3."""
    nu, nv = count
    local = sheet_points((nu, nv), (width, height))
    down = 0.5 * height - local[:, 1]               # distance from the top edge, >= 0
    direction = np.array([0.0, np.sin(tilt), -np.cos(tilt)])
    points = np.stack([local[:, 0], np.zeros(len(local)), np.zeros(len(local))], axis=1) + down[:, None] * direction
    top = np.flatnonzero(np.isclose(down, 0.0))
    top = top[np.argsort(points[top, 0])]
    return points, sheet_triangles((nu, nv)), top


def cloth_body(points, triangles, pinned, width: float, height: float, areal_density: float,
               stretch_stiffness: float, thickness: float, poisson: float, damping: float) -> FlexBody:
    """Cloth flex: areal_density kg/m^2, stretch_stiffness = Young's modulus * thickness (N/m)."""
    return FlexBody(points=points, elements=triangles, dim=2, mass=areal_density * width * height,
                    young=stretch_stiffness / thickness, poisson=poisson, damping=damping, thickness=thickness,
                    radius=0.002, pinned=pinned)


def hanging_recording(width: float, height: float, tilt: float, pin: str, areal_density: float,
                      stretch_stiffness: float, thickness: float, poisson: float, damping: float,
                      breeze=(0.0, 0.0, 0.0), gust_amplitude: float = 0.0, gust_frequency: float = 1.0,
                      max_points: int = 16, duration: float = 1.5, num_frames: int = 16,
                      timestep: float = 0.01) -> FlexRecording:
    """Simulate the cloth. pin "edge" (the whole top edge) or "corners" (two pinched top corners);
    tilt rad from hanging straight down; breeze (3,) m/s wind with gusts (see `sheet_wind`)."""
    count = grid_count(width, height, max_points)
    points, triangles, top = hanging_sheet(width, height, tilt, count)
    if pin not in ("edge", "corners"):
        raise ValueError(f"unknown pin {pin!r}; expected 'edge' or 'corners'")
    pinned = np.zeros(len(points), bool)
    pinned[top if pin == "edge" else sheet_corner_pinch(count, 2) + sheet_corner_pinch(count, 3)] = True
    body = cloth_body(points, triangles, pinned, width, height, areal_density, stretch_stiffness, thickness,
                      poisson, damping)
    forces = None
    if np.any(np.asarray(breeze) != 0):
        forces = sheet_wind(triangles, breeze, gust_amplitude=gust_amplitude, gust_frequency=gust_frequency)
    loads = FlexLoads(gravity=(0.0, 0.0, -GRAVITY), forces=forces)
    settings = SimSettings(timestep=timestep, max_displacement=3.0 * (width + height))
    return simulate_flex(body, loads, settings, duration, num_frames)


def sample_cloth_material(rng: np.random.Generator) -> dict:
    """Fabric-like material: 0.1-0.4 kg/m^2, stretch stiffness 1.5-8 kN/m, 0.3-1 mm thick."""
    return dict(areal_density=rng.uniform(0.1, 0.4), stretch_stiffness=log_uniform(rng, 1500.0, 8000.0),
                thickness=rng.uniform(0.0003, 0.001), poisson=rng.uniform(0.2, 0.4),
                damping=log_uniform(rng, 0.001, 0.01))


def sample_hanging_params(rng: np.random.Generator) -> dict:
    """Random hanging cloth: size, pins, release tilt, material, maybe a light breeze."""
    width = rng.uniform(0.3, 0.9)
    height = width * rng.uniform(0.6, 1.5)
    params = dict(width=width, height=height, tilt=rng.uniform(np.radians(20), np.radians(100)),
                  pin=str(rng.choice(["edge", "corners"])), max_points=int(rng.integers(14, 21)),
                  duration=rng.uniform(1.0, 2.0), **sample_cloth_material(rng))
    if rng.uniform() < 0.3:
        angle = rng.uniform(0, 2 * np.pi)
        params.update(breeze=(rng.uniform(0.5, 3.0) * np.array([np.cos(angle), np.sin(angle), 0.0])).tolist(),
                      gust_amplitude=rng.uniform(0.0, 0.5), gust_frequency=rng.uniform(0.5, 2.0))
    return params


def hanging_instance(seed: int, num_frames: int, params: dict) -> Instance:
    """Instance from explicit parameters (the keyword arguments of `hanging_recording`)."""
    recording = hanging_recording(num_frames=num_frames, **params)
    return recording_to_instance(recording, CATEGORY, "cloth", seed, params)


def generate(seed: int, num_frames: int) -> Instance:
    """One random hanging cloth instance, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    return hanging_instance(seed, num_frames, sample_hanging_params(rng))
