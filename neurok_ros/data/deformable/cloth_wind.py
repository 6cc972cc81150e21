"""cloth_wind: a flag or curtain pinned along its top edge or at its two top corners, hanging still
until gusty wind blows into it (aerodynamic pressure on every triangle, relative to its motion).

Frame: the top edge runs along x at z = 0, the cloth hangs towards -z; gravity -z. Physics: MuJoCo
dim=2 flex with elastic2d="both", no contact; wind forces from `loads.sheet_wind`. Lengths in metres.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.data.deformable.assemble import recording_to_instance
from neurok_ros.data.deformable.cloth_hanging import hanging_recording, sample_cloth_material
from neurok_ros.data.instance_format import Instance

CATEGORY = "cloth_wind"


def sample_wind_params(rng: np.random.Generator) -> dict:
    """Random flag: size, pins, material, and a 1.5-6 m/s wind mostly across the cloth with gusts."""
    width = rng.uniform(0.3, 0.9)
    height = width * rng.uniform(0.5, 1.2)
    across = rng.choice([-1.0, 1.0]) * np.array([0.0, 1.0, 0.0])
    along = rng.uniform(-0.6, 0.6) * np.array([1.0, 0.0, 0.0])
    up = rng.uniform(-0.1, 0.3) * np.array([0.0, 0.0, 1.0])
    direction = across + along + up
    wind = rng.uniform(1.5, 6.0) * direction / np.linalg.norm(direction)
    return dict(width=width, height=height, tilt=rng.uniform(0.0, np.radians(10)),
                pin=str(rng.choice(["edge", "corners"])), breeze=wind.tolist(),
                gust_amplitude=rng.uniform(0.2, 0.7), gust_frequency=rng.uniform(0.7, 3.0),
                max_points=int(rng.integers(14, 21)), duration=rng.uniform(1.2, 2.0), **sample_cloth_material(rng))


def wind_instance(seed: int, num_frames: int, params: dict) -> Instance:
    """Instance from explicit parameters (the keyword arguments of `cloth_hanging.hanging_recording`)."""
    recording = hanging_recording(num_frames=num_frames, **params)
    return recording_to_instance(recording, CATEGORY, "cloth", seed, params)


def generate(seed: int, num_frames: int) -> Instance:
    """One random cloth-in-wind instance, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    return wind_instance(seed, num_frames, sample_wind_params(rng))
