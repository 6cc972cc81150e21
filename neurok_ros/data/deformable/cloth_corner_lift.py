"""cloth_corner_lift: a cloth lying flat on the ground is picked up by one corner (a small pinch of
the corner point and its two edge neighbours) that a gripper carries along a smooth path: up,
across, and sometimes back down, so the cloth peels off the ground, hangs and swings.

Frame: ground plane z = 0, the cloth initially flat on it, centred at the origin; gravity -z.
Physics: MuJoCo dim=2 flex with elastic2d="both", flex-ground contact with friction (Newton
solver), and a mocap gripper tied to the pinched points by `connect` equalities. Lengths in metres.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.deformable.assemble import recording_to_instance
from neurok_ros.data.deformable.cloth_hanging import cloth_body, grid_count, sample_cloth_material
from neurok_ros.data.deformable.flex_meshes import sheet_corner_pinch, sheet_points, sheet_triangles
from neurok_ros.data.deformable.loads import waypoint_path
from neurok_ros.data.deformable.mujoco_flex import FlexLoads, FlexRecording, Grip, SimSettings, simulate_flex
from neurok_ros.data.instance_format import Instance

CATEGORY = "cloth_corner_lift"
GRAVITY = 9.81
RADIUS = 0.002


def lift_recording(width: float, depth: float, corner: int, waypoints, path_time: float,
                   areal_density: float, stretch_stiffness: float, thickness: float, poisson: float,
                   damping: float, friction: float = 0.8, max_points: int = 16, duration: float = 1.5,
                   num_frames: int = 16, timestep: float = 0.01) -> FlexRecording:
    """Simulate the lift of `corner` (0..3, see `sheet_corner_pinch`). waypoints (k, 3) m: gripper
    displacements from the corner's start (the first is 0), passed at even times over `path_time` s
    with smooth easing; held afterwards. Material as in `cloth_hanging.cloth_body`."""
    count = grid_count(width, depth, max_points)
    points = sheet_points(count, (width, depth))
    points[:, 2] = RADIUS + 0.001
    triangles = sheet_triangles(count)
    body = cloth_body(points, triangles, None, width, depth, areal_density, stretch_stiffness, thickness,
                      poisson, damping)
    grip = Grip(tuple(sheet_corner_pinch(count, corner)), waypoint_path(waypoints, path_time))
    loads = FlexLoads(gravity=(0.0, 0.0, -GRAVITY), ground_height=0.0, friction=friction, grips=(grip,))
    reach = float(np.max(np.linalg.norm(np.asarray(waypoints, float), axis=1)))
    # Newton handles the many ground contacts of a cloth faster than CG on average here.
    settings = SimSettings(timestep=timestep, solver="Newton", max_displacement=2.0 * (width + depth) + reach)
    return simulate_flex(body, loads, settings, duration, num_frames)


def sample_lift_params(rng: np.random.Generator) -> dict:
    """Random lift: cloth size and material, corner, and a path that lifts 40-110 % of the cloth's
    diagonal while drifting sideways, then either holds, moves on, or lowers again."""
    width = rng.uniform(0.3, 0.8)
    depth = width * rng.uniform(0.7, 1.0)
    diagonal = float(np.hypot(width, depth))
    corner = int(rng.integers(0, 4))
    start = sheet_points((2, 2), (width, depth))[[0, 2, 3, 1][corner]]
    inward = -start / np.linalg.norm(start)
    lift = rng.uniform(0.4, 1.1) * diagonal
    drift = rng.uniform(-0.3, 0.6) * diagonal * inward + rng.uniform(-0.2, 0.2) * diagonal * np.array(
        [-inward[1], inward[0], 0.0])
    top = np.array([0.0, 0.0, lift]) + 0.5 * drift
    ending = str(rng.choice(["hold", "carry", "lower"]))
    final = {"hold": top, "carry": top + 0.5 * drift, "lower": drift + np.array([0.0, 0.0, 0.25 * lift])}[ending]
    duration = rng.uniform(1.2, 2.0)
    return dict(width=width, depth=depth, corner=corner, waypoints=[[0.0, 0.0, 0.0], top.tolist(), final.tolist()],
                path_time=rng.uniform(0.7, 1.0) * duration, friction=rng.uniform(0.4, 1.0),
                max_points=int(rng.integers(14, 20)), duration=duration, ending=ending, **sample_cloth_material(rng))


def lift_instance(seed: int, num_frames: int, params: dict) -> Instance:
    """Instance from explicit parameters (the keyword arguments of `lift_recording` plus "ending")."""
    recording = lift_recording(num_frames=num_frames, **{k: v for k, v in params.items() if k != "ending"})
    return recording_to_instance(recording, CATEGORY, "cloth", seed, params)


def generate(seed: int, num_frames: int) -> Instance:
    """One random corner-lift instance, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    return lift_instance(seed, num_frames, sample_lift_params(rng))
