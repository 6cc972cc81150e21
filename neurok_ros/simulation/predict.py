"""predict_motion: how an encoded mesh moves under gravity, its own elasticity and contact actions.

    instance = encode_mesh(model, V, F)
    prediction = predict_motion(instance, ContactConditions(positions, velocities), settings,
                                articulation=read_articulation(...))
    prediction.vertices   # (T, n, 3) float32, the input mesh's frame, units and vertex order

Two charts, each owning its coordinates, initial velocity, energies and output decoding
(docs/physics.md):
- the joints chart (simulation/articulated_chart.py), for an articulation with joints: every part
  rigid, the coordinates are the joint angles and displacements, the root anchored unless free_base;
- the latent chart (simulation/latent_chart.py), for everything else (no articulation, or one with
  no joints: a soft body, a cloth, a scan): the learned latent space carried by a free rigid body.
"""
from __future__ import annotations

from typing import Callable, Optional

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.simulation.action_binding import bind_actions
from neurok_ros.simulation.prediction import Prediction
from neurok_ros.simulation.settings import SimulationSettings

__all__ = ["bind_actions", "predict_motion"]


def predict_motion(instance, conditions: Optional[ContactConditions] = None,
                   settings: Optional[SimulationSettings] = None, pinned_vertices=None,
                   articulation=None, should_stop: Optional[Callable[[], bool]] = None,
                   progress: Optional[Callable[[float], None]] = None) -> Prediction:
    """Simulate `instance` (from encode_mesh) from rest at its input pose.

    conditions: contacts at t = 0 (mesh frame, metres, m/s) and an optional drag path, or None for
    free motion; settings: default_settings() when None; pinned_vertices: (n,) bool over the mesh's
    vertices, held in place like the pin boxes of the settings; articulation: the object's parts and
    joints (neurok articulate): with joints, the joints chart, else the latent chart (module
    docstring). Raises ActionError for unusable contacts or forces, NeurokInputError when the
    integration diverges.

    should_stop: a cheap function asked at every integrator step (milliseconds apart with the default
    polynomial dynamics map); once it returns True the simulation raises neurok_ros.errors.Cancelled
    (a caller's cancel). progress: called during the integration with the fraction of the simulated
    time span done, 0..1.
    """
    if articulation is not None and articulation.joints:
        from neurok_ros.simulation.articulated_chart import predict_articulated

        return predict_articulated(instance.vertices, instance.faces, articulation, conditions, settings,
                                   pinned_vertices, should_stop, progress)
    from neurok_ros.simulation.latent_chart import predict_latent  # its solvers' imports cost 0.5 s

    return predict_latent(instance, conditions, settings, pinned_vertices, should_stop, progress)
