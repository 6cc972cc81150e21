"""The demo's objects without joints, simulated in the latent chart with the shipped model: a soft
beam clamped at one end and poked at the other bends and springs back; a square cloth held by one
edge drapes under gravity. Each writes its trajectory as a GIF."""
from __future__ import annotations

from pathlib import Path

import numpy as np

POKE_SPEED = 1.5       # m/s, sideways at the beam's free end
BEAM_DAMPING = 1.5     # 1/s: the beam settles within the 2 s shown
CLOTH_SIZE = 0.5       # m, a square cloth of CLOTH_COUNT x CLOTH_COUNT vertices, 0.5 m up
CLOTH_COUNT = 16
CLOTH_DAMPING = 4.0    # 1/s: the air and the cloth itself take the swing out: it comes to hang


def poke_soft_beam(model, vertices: np.ndarray, faces: np.ndarray, out: Path) -> dict:
    """Clamp the beam (n, 3) metres at its low end along its longest axis (a pin box over the last 8%),
    poke its far end sideways at POKE_SPEED, no gravity, 2 s at 30 fps; writes soft_poke.gif.
    Returns the peak and final displacement of the poked end (m) and the energy drift."""
    from neurok_ros.dynamics.contact_conditions import ContactConditions
    from neurok_ros.kinematics.instance import encode_mesh
    from neurok_ros.simulation.predict import predict_motion
    from neurok_ros.simulation.settings import PinBox, settings_from
    from neurok_ros.visualisation.mesh_animation import render_gif

    vertices = np.asarray(vertices, dtype=np.float64)
    extent = np.ptp(vertices, axis=0)
    axis = int(np.argmax(extent))
    upper = vertices.max(axis=0) + 1e-3
    upper[axis] = vertices[:, axis].min() + 0.08 * extent[axis]
    clamp = PinBox(tuple(vertices.min(axis=0) - 1e-3), tuple(upper))
    tip = int(np.argmax(vertices[:, axis]))
    velocity = np.zeros(3)
    velocity[(axis + 1) % 3] = POKE_SPEED
    settings = settings_from(duration=2.0, fps=30.0, gravity=(0.0, 0.0, 0.0), damping=BEAM_DAMPING, pins=[clamp])
    prediction = predict_motion(encode_mesh(model, vertices, faces), ContactConditions(vertices[tip][None],
                                                                                        velocity[None]), settings)
    render_gif(prediction.vertices, faces, out / "soft_poke.gif", fps=15, times=prediction.times)
    moved = np.linalg.norm(prediction.vertices[:, tip] - vertices[tip], axis=-1)
    return {"length_m": float(extent[axis]), "peak_m": float(moved.max()),
            "peak_at_s": float(prediction.times[int(np.argmax(moved))]), "final_m": float(moved[-1]),
            "energy_drift": float(prediction.summary["energy_drift"])}


def square_cloth() -> tuple[np.ndarray, np.ndarray]:
    """A flat square cloth, CLOTH_SIZE metres, CLOTH_COUNT x CLOTH_COUNT vertices, 0.5 m up: (V, F)."""
    from neurok_ros.data.deformable.flex_meshes import sheet_points, sheet_triangles

    count = (CLOTH_COUNT, CLOTH_COUNT)
    vertices = sheet_points(count, (CLOTH_SIZE, CLOTH_SIZE)) + np.array([0.0, 0.0, 0.5])
    return vertices, sheet_triangles(count)


def drape_cloth(model, out: Path) -> dict:
    """The square cloth held along one edge by a thin pin box, under gravity and CLOTH_DAMPING, 1.5 s
    at 20 fps;
    writes cloth_drape.gif. Returns how far its lowest point fell (m) and the energy drift."""
    from neurok_ros.articulation.readout import read_articulation
    from neurok_ros.kinematics.instance import encode_mesh
    from neurok_ros.simulation.predict import predict_motion
    from neurok_ros.simulation.settings import PinBox, settings_from
    from neurok_ros.visualisation.mesh_animation import render_gif

    vertices, faces = square_cloth()
    instance = encode_mesh(model, vertices, faces)
    articulation = read_articulation(instance)  # one open thin sheet: a cloth, no joints
    edge = vertices[:, 1] > vertices[:, 1].max() - 1e-6
    held = PinBox(tuple(vertices[edge].min(axis=0) - 1e-3), tuple(vertices[edge].max(axis=0) + 1e-3))
    settings = settings_from(duration=1.5, fps=20.0, damping=CLOTH_DAMPING, pins=[held])
    prediction = predict_motion(instance, None, settings, articulation=articulation)
    render_gif(prediction.vertices, faces, out / "cloth_drape.gif", fps=10, times=prediction.times)
    fall = vertices[:, 2].min() - prediction.vertices[:, :, 2].min(axis=1)
    return {"size_m": CLOTH_SIZE, "kind": articulation.kind, "joints": len(articulation.joints),
            "lowest_point_fall_m": float(fall.max()), "edge_moved_m":
            float(np.linalg.norm(prediction.vertices[:, edge] - vertices[edge], axis=-1).max()),
            "energy_drift": float(prediction.summary["energy_drift"])}
