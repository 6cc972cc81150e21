"""The articulated chart: an object with joints simulated in its joint coordinates, every part rigid.

    prediction = predict_articulated(vertices, faces, articulation, conditions, settings)

q = the joint angles (rad) and displacements (m) of `articulation` (neurok articulate), relative to
the input pose; with `free_base` six base coordinates come first (x, y, z slides, then yaw, pitch,
roll about the root's centre of mass). Each part is a rigid body of uniform density over its volume
(a closed piece) or its area (a thin shell), scaled so the parts weigh `mass` in all, and carried by
six point masses with its exact mass, centre of mass and inertia (geometry/mass_properties.py), so
the dynamics is that of the rigid parts (dynamics/joint_dynamics.py). The root is anchored to the
world unless `free_base`. Contacts and push points snap to the surface and ride on the part of the
face they land on; pin boxes hold the parts whose vertices they contain (every joint between such a
part and the root is locked; with a free base the base too). Output vertices are each part's exact
rigid motion of the input vertices.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

import numpy as np
import torch

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.articulation.urdf import face_labels
from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.dynamics.contacts import at_points
from neurok_ros.dynamics.external_forces import PushForce, drag_from_conditions
from neurok_ros.dynamics.joint_dynamics import JointForce, JointSystem, initial_velocity, integrate, kinematics
from neurok_ros.dynamics.joint_tree import PRISMATIC, REVOLUTE, JointTree, body_states, point_motion, with_free_base
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.mass_properties import equivalent_points, mass_properties
from neurok_ros.simulation.action_binding import bind_actions
from neurok_ros.simulation.prediction import Prediction
from neurok_ros.simulation.settings import SimulationSettings, default_settings, pinned_by_boxes
from neurok_ros.simulation.surface_index import SurfaceIndex


def joint_tree(articulation: Articulation) -> tuple[JointTree, np.ndarray]:
    """(tree, body (P,)): the articulation's joints as a JointTree, and the body of each part label
    (a part that no joint moves rides on the root, body 0). NeurokInputError when a joint's parent
    comes after it or a part is the child of two joints."""
    body = np.zeros(articulation.num_parts, dtype=np.int64)
    parent, kind, axis, origin, names = [], [], [], [], []
    seen = {0}
    for j, joint in enumerate(articulation.joints):
        if joint.parent not in seen or joint.child in seen or not 0 < joint.child < articulation.num_parts:
            raise NeurokInputError(f"joint {joint.name!r}: parent {joint.parent} must come before its child "
                                   f"{joint.child}, and each part may be the child of one joint only")
        seen.add(joint.child)
        body[joint.child] = j + 1
        parent.append(body[joint.parent])
        kind.append(REVOLUTE if joint.type == "revolute" else PRISMATIC)
        axis.append(joint.axis)
        origin.append(joint.origin)
        names.append(joint.name)
    return JointTree(parent, kind, np.reshape(axis, (-1, 3)), np.reshape(origin, (-1, 3)), names), body


def part_point_masses(vertices: np.ndarray, faces: np.ndarray, labels: np.ndarray, total: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """points (6P, 3) metres, masses (6P,) kg, part (6P,) labels, and each part's mass (P,) kg: six
    equivalent point masses per part (uniform density, scaled to `total` kg)."""
    per_face = face_labels(faces, labels)
    properties = []
    for part in range(int(labels.max()) + 1):
        own = faces[per_face == part]
        if not len(own):  # a part with no face of its own: its vertices as a small shell
            own = faces[(labels[faces] == part).any(1)]
        properties.append(mass_properties(vertices, own))
    scale = total / sum(p[0] for p in properties)
    points, masses, parts = [], [], []
    for part, (mass, centre, inertia, _) in enumerate(properties):
        p, m = equivalent_points(mass * scale, centre, inertia * scale)
        points.append(p)
        masses.append(m)
        parts.append(np.full(6, part))
    return (np.concatenate(points), np.concatenate(masses), np.concatenate(parts),
            np.array([p[0] * scale for p in properties]))


def _held_parts(vertices: np.ndarray, labels: np.ndarray, settings: SimulationSettings,
                pinned_vertices: Optional[np.ndarray]) -> set:
    """Labels of the parts that a pin box (or pinned_vertices) holds; ActionError for a box holding no vertex."""
    held = set()
    for inside in pinned_by_boxes(settings, vertices):
        held |= set(np.unique(labels[inside]).tolist())
    if pinned_vertices is not None:
        held |= set(np.unique(labels[np.asarray(pinned_vertices, dtype=bool)]).tolist())
    return held


def actions_on_held_parts(system: JointSystem, first: int, count: int) -> np.ndarray:
    """Indices (into the `count` action points from point `first` on) of the contacts and push points
    that no free joint moves: on the anchored base or on a part a pin holds."""
    if not count:
        return np.zeros(0, dtype=np.int64)
    zero = np.zeros(system.num_coords)
    jac = kinematics(system, zero, zero, np.arange(first, first + count))[3][:, :, system.free]
    return np.flatnonzero(np.abs(jac).reshape(count, -1).max(axis=1, initial=0.0) == 0.0)


def predict_articulated(vertices, faces, articulation: Articulation,
                        conditions: Optional[ContactConditions] = None,
                        settings: Optional[SimulationSettings] = None, pinned_vertices=None,
                        should_stop: Optional[Callable[[], bool]] = None,
                        progress: Optional[Callable[[float], None]] = None):
    """Simulate the mesh (vertices (n, 3) metres, faces (m, 3)) with the parts and joints of
    `articulation`, from rest at its input pose; returns a predict.Prediction whose q (T, k) are the
    joint coordinates (base first with free_base). ActionError for unusable contacts, forces or pins.
    should_stop and progress: see simulation/predict.py's predict_motion."""
    settings = (settings or default_settings()).validate()
    started = time.perf_counter()
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    labels = articulation.labels
    if labels.shape != (len(vertices),):
        raise NeurokInputError(f"the articulation labels {len(labels)} vertices, the mesh has {len(vertices)}")
    tree, part_body = joint_tree(articulation)
    points, masses, point_part, part_mass = part_point_masses(vertices, faces, labels, settings.mass)
    offset = 0
    if settings.free_base:
        root = point_part == 0
        centre = (masses[root] @ points[root]) / masses[root].sum()
        tree, offset = with_free_base(tree, centre)
    part_body = part_body + offset

    index = SurfaceIndex(vertices, faces)
    bindings = bind_actions(vertices, faces, conditions, settings, index)
    action_points = bindings.surface
    action_part = (face_labels(faces, labels)[index.project(action_points).faces] if len(action_points)
                   else np.zeros(0, dtype=np.int64))
    body = part_body[np.concatenate([point_part, action_part])]
    everything = np.concatenate([points, action_points])
    local = everything - tree.rest_origin[body]
    count = tree.num_joints

    locked = np.zeros(count, dtype=bool)
    held = _held_parts(vertices, labels, settings, pinned_vertices)
    for part in held:
        locked |= tree.ancestors[part_body[part]]
    if held and offset:
        locked[:offset] = True

    lower = np.full(count, -np.inf)
    upper = np.full(count, np.inf)
    for j, joint in enumerate(articulation.joints):
        lower[offset + j], upper[offset + j] = joint.lower, joint.upper
    damping = np.full(count, settings.joint_damping)
    friction = np.full(count, settings.joint_friction)
    damping[:offset] = friction[:offset] = 0.0

    n = len(points)
    contact_index = np.array([n + i for i in bindings.contact_index], dtype=np.int64)
    forces = []
    for push, i in zip(settings.pushes, bindings.push_index):
        forces.append(JointForce(np.array([n + i]), PushForce(at_points([n + i]), torch.tensor([push.force]),
                                                              push.t0, push.t1)))
    if conditions is not None and conditions.has_path:
        drag = drag_from_conditions(conditions, at_points(contact_index), torch.as_tensor(action_points[:len(
            contact_index)]), settings.drag_stiffness, settings.drag_damping)
        forces.append(JointForce(contact_index, drag))
    system = JointSystem(tree, body, local, np.concatenate([masses, np.zeros(len(action_points))]),
                         gravity=np.asarray(settings.gravity), damping=damping, friction=friction, lower=lower,
                         upper=upper, restitution=settings.restitution, proportional_damping=settings.damping,
                         locked=locked, forces=forces)

    held_actions = actions_on_held_parts(system, n, len(action_points))
    qdot0, residual = np.zeros(count), None
    moving = conditions is not None and len(contact_index) and np.abs(conditions.velocities).max() > 0
    if moving:
        qdot0, residual = initial_velocity(system, contact_index, conditions.velocities)
    frames = settings.frame_times()
    trajectory = integrate(system, np.zeros(count), qdot0, frames, settings.step_size, should_stop, progress)
    if not (np.isfinite(trajectory.q).all() and np.isfinite(trajectory.qdot).all()):
        raise NeurokInputError("the simulation diverged; use a smaller step_size")
    simulated = time.perf_counter()

    vertex_body = part_body[labels]
    vertex_local = vertices - tree.rest_origin[vertex_body]
    out = np.empty((len(frames), len(vertices), 3), dtype=np.float32)
    sim_points = np.empty((len(frames), len(everything), 3), dtype=np.float32)
    for t, (q, qdot) in enumerate(zip(trajectory.q, trajectory.qdot)):
        states = body_states(tree, q, qdot)
        out[t] = np.einsum("nij,nj->ni", states.R[vertex_body], vertex_local) + states.c[vertex_body]
        sim_points[t] = point_motion(states, system.body, system.local)[0]
    energy = np.stack([trajectory.kinetic, trajectory.potential, trajectory.kinetic + trajectory.potential], 1)
    seconds = {"simulate": round(simulated - started, 4), "decode": round(time.perf_counter() - simulated, 4)}
    seconds["total"] = round(sum(seconds.values()), 4)
    summary = {
        "chart": "joints", "frames": len(frames), "duration_s": settings.duration, "fps": settings.fps,
        "joints": tree.names, "free_base": bool(settings.free_base),
        "locked_joints": [tree.names[j] for j in np.flatnonzero(locked)],
        "part_masses_kg": [round(float(m), 6) for m in part_mass],
        "energy_drift": trajectory.energy_drift(),
        "energy_drift_note": "max |E - E0 - W + D| over the energy exchanged, at the output frames",
        "energy_initial_j": float(energy[0, 2]), "energy_final_j": float(energy[-1, 2]),
        "contact_velocity_residual": residual,
        "contact_surface_distance_m": bindings.distance[:len(contact_index)].tolist() if len(contact_index) else None,
        "actions_on_held_parts": len(held_actions),
        "impacts": trajectory.impacts, "steps": trajectory.steps, "method": "rk4", "step_size_s": settings.step_size,
        "max_abs_q": float(np.abs(trajectory.q).max()) if trajectory.q.size else 0.0,
        "seconds": seconds,
    }
    if len(held_actions):
        summary["actions_on_held_parts_note"] = (
            f"{len(held_actions)} of the contacts and pushes land on a part that no joint can move (the anchored "
            f"base, or a part a pin holds), so they move nothing; see --free-base, or the readout's parts")
    return Prediction(vertices=out, faces=faces, times=frames, q=trajectory.q, energy=energy,
                      work=trajectory.work, dissipated=trajectory.dissipated, points=sim_points,
                      trajectory=trajectory, summary=summary)
