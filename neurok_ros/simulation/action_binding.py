"""Where the actions act: contacts and push points snapped to the mesh surface (any chart)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.simulation.settings import SimulationSettings
from neurok_ros.simulation.snapping import snap_to_surface
from neurok_ros.simulation.surface_index import SurfaceIndex


@dataclass
class Bindings:
    """Where the actions act: contact (C,) and push (P,) indices of the massless simulation points,
    the snapped surface points and the request-to-surface distances."""

    surface: np.ndarray
    distance: np.ndarray
    contact_index: list
    push_index: list


def bind_actions(vertices, faces, conditions: Optional[ContactConditions], settings: SimulationSettings,
                 index: Optional[SurfaceIndex] = None) -> "Bindings":
    """Snap the contacts and the push points to the surface of the mesh (vertices, faces); raise
    ActionError for one beyond the tolerance. Cheap (no model): callers may check actions first.
    index: a SurfaceIndex of the mesh to reuse."""
    requests, contact_index, push_index = [], [], []
    if conditions is not None:
        conditions.validate()
        contact_index = list(range(conditions.num_contacts))
        requests.append(np.asarray(conditions.positions, dtype=np.float64))
    for push in settings.pushes:
        push_index.append(len(contact_index) + len(push_index))
        requests.append(np.asarray(push.point, dtype=np.float64).reshape(1, 3))
    if not requests:
        return Bindings(np.zeros((0, 3)), np.zeros(0), [], [])
    points = np.concatenate(requests)
    index = index or SurfaceIndex(vertices, faces)
    surface = np.zeros((0, 3))
    distance = np.zeros(0)
    if contact_index:
        s, d = snap_to_surface(vertices, faces, points[:len(contact_index)],
                               settings.contact_tolerance, "contact", index)
        surface, distance = np.concatenate([surface, s]), np.concatenate([distance, d])
    if push_index:
        s, d = snap_to_surface(vertices, faces, points[len(contact_index):],
                               settings.contact_tolerance, "push point", index)
        surface, distance = np.concatenate([surface, s]), np.concatenate([distance, d])
    return Bindings(surface, distance, contact_index, push_index)
