"""The latent chart: an object without joints (a soft body, a cloth, a scan) simulated in the learned
latent space, carried by a free rigid body.

    prediction = predict_latent(instance, conditions, settings)

The map is a KinematicMap of a few dozen surface points in metres (learned_map: z = z_rest + A U q,
the principal directions of the active subspace), by default replaced for the solver by a
polynomial fitted to it (surrogate; dynamics_map), carried by six rigid coordinates (free_body.py:
the object falls at g and turns as a whole; pins along a line, a cloth's edge, hold it by their
springs). Held points that fix a frame (a base in a box) hold the map in their frame exactly
(learned_map), and there is no carrier. Energies: gravity; the strain energy `stiffness`, a
shape-matching energy that is zero for every rigid motion (free_body.CarriedSpring; in a held
frame, a spring toward the rest shape there); pin springs `pin_stiffness` on the held points; the
spring toward the input pose `anchor_stiffness`, only when asked for; the prior barrier. The
Euler-Lagrange equations are integrated in (q, s) (neurok_ros.dynamics), and the full mesh is
decoded by the real decoder at the output frames only, in batches (output_decoding), then moved by
the carrier. Conditions: contacts and push points snap to the surface (rejected beyond the
tolerance) and become massless simulation points; the contacts' initial velocities give qdot0 by
least squares in the kinetic-energy metric; a drag path pulls them through a spring-damper; push
forces act over time windows. q0 = 0 is the input pose.
"""
from __future__ import annotations

import math
import time
from typing import Callable, Optional

import numpy as np
import torch

from neurok_ros.dynamics.contact_conditions import ContactConditions
from neurok_ros.dynamics.contacts import at_points, contact_positions
from neurok_ros.dynamics.external_forces import PushForce, drag_from_conditions
from neurok_ros.dynamics.initial_conditions import contact_initial_velocity
from neurok_ros.dynamics.integrate import FIXED_STEP, simulate
from neurok_ros.dynamics.kinematic_map import KinematicMap, positions_and_velocities
from neurok_ros.dynamics.lagrangian import LagrangianSystem
from neurok_ros.dynamics.potentials import potential_energy
from neurok_ros.errors import Cancelled, NeurokInputError
from neurok_ros.geometry.rigid_alignment import apply_rigid, fixes_a_frame
from neurok_ros.simulation.action_binding import Bindings, bind_actions
from neurok_ros.simulation.dense_output import interpolate_states
from neurok_ros.simulation.free_body import CarriedSpring, carried_map
from neurok_ros.simulation.learned_map import LearnedMap, learned_kinematic_map
from neurok_ros.simulation.output_decoding import decode_frames
from neurok_ros.simulation.prediction import Prediction
from neurok_ros.simulation.settings import SimulationSettings, default_settings, pinned_by_boxes
from neurok_ros.simulation.snapping import nearest_sample_distance, surface_index
from neurok_ros.simulation.surrogate import SOLVER_DEVICE, fit_surrogate, frame_error, refine_surrogate

FREE_BODY_TIKHONOV = 1e-12  # relative regulariser of M with the free-body carrier (float64)
LOCATING_STEP = 1.0 / 60.0  # s, longest rk4 step of the surrogate solves that only locate the motion


def resolve_derivatives(kmap: KinematicMap, choice: str) -> str:
    """Fix kmap.derivatives to "ad" or "fd"; "auto" means "fd" for the learned decoder, by rule.

    KinematicMap's own "auto" times both methods, and for the attention decoder that timing costs
    more than the simulation it would speed up: the first forward-mode AD call of a process pays a
    one-time initialisation of about 4 s (torch's forward-AD decompositions), and after it one jvp
    alone (0.07 s at 64 points, k_sim = 4) already costs more than a whole batched-difference
    expansion (0.02 s), about half an AD expansion. "ad" stays available.
    """
    if choice not in ("auto", "ad", "fd"):
        raise NeurokInputError(f"derivatives must be auto, ad or fd, got {choice!r}")
    kmap.derivatives = "fd" if choice == "auto" else choice
    return kmap.derivatives


def _solver_nodes(settings: SimulationSettings, frames: np.ndarray) -> tuple[np.ndarray, bool]:
    """(node times, interpolate?): the frames themselves when the solver steps at least once per
    frame (or adapts), else a uniform grid of the step size whose states are interpolated."""
    interval = 1.0 / settings.fps
    if settings.method not in FIXED_STEP or settings.step_size <= interval * (1.0 + 1e-9) or len(frames) < 2:
        return frames, False
    count = max(1, math.ceil(settings.duration / settings.step_size - 1e-9))
    return np.linspace(0.0, settings.duration, count + 1), True


def _forces(learned: LearnedMap, settings: SimulationSettings, conditions, bindings: Bindings, contacts, dtype,
            device):
    forces = []
    base = learned.num_samples
    for push, index in zip(settings.pushes, bindings.push_index):
        forces.append(PushForce(at_points([base + index]), torch.as_tensor([push.force], dtype=dtype, device=device),
                                push.t0, push.t1))
    if conditions is not None and conditions.has_path:
        start = contact_positions(contacts, learned.rest_positions.to(device))
        forces.append(drag_from_conditions(conditions, contacts, start, settings.drag_stiffness,
                                           settings.drag_damping))
    return forces


def starts_moving(conditions, bindings: Bindings) -> bool:
    """Whether requested contact velocities start the motion (contacts, and not all velocities zero)."""
    return (conditions is not None and bool(bindings.contact_index)
            and float(np.abs(np.asarray(conditions.velocities)).max()) > 0)


def pin_selector(settings: SimulationSettings, vertices, faces, pinned_vertices=None):
    """samples -> (count,) bool: the surface samples held in place: those inside a pin box of the
    settings and those on a face whose three vertices are all in pinned_vertices ((n,) bool); and
    each held vertex farther than a sample spacing from every held sample holds its nearest sample,
    so a thin box along an edge, or a box around a single vertex, holds the surface all along it.
    None when nothing is pinned. ActionError for a pin box that holds no vertex of the mesh."""
    if not settings.pins and pinned_vertices is None:
        return None
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    mask = None if pinned_vertices is None else np.asarray(pinned_vertices, dtype=bool).reshape(-1)
    boxes = [(box, vertices[inside]) for box, inside in zip(settings.pins, pinned_by_boxes(settings, vertices))]

    def select(samples) -> np.ndarray:
        from scipy.spatial import cKDTree

        tree = cKDTree(samples.points)
        area = 0.5 * np.linalg.norm(np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]],
                                             vertices[faces[:, 2]] - vertices[faces[:, 0]]), axis=1).sum()
        spacing = np.sqrt(area / max(len(samples.points), 1))  # m, between neighbouring samples
        held = np.zeros(len(samples.points), dtype=bool)
        catches = [(box.contains(samples.points), own) for box, own in boxes]
        if mask is not None and mask.any():
            catches.append((mask[faces[samples.face_ids]].all(axis=1), vertices[mask]))
        for caught, own in catches:
            held |= caught
            # a held vertex with no held sample within a sample spacing holds its nearest sample
            if caught.any():
                far = cKDTree(samples.points[caught]).query(own)[0] > spacing
            else:
                far = np.ones(len(own), dtype=bool)
            held[tree.query(own[far])[1]] = True
        return held

    return select


def predict_latent(instance, conditions: Optional[ContactConditions] = None,
                   settings: Optional[SimulationSettings] = None, pinned_vertices=None,
                   should_stop: Optional[Callable[[], bool]] = None,
                   progress: Optional[Callable[[float], None]] = None) -> Prediction:
    """Simulate `instance` (from encode_mesh) from rest at its input pose in the latent chart; see
    the module docstring and simulation/predict.py's predict_motion, which dispatches here
    (should_stop and progress: there)."""
    settings = (settings or default_settings()).validate()
    started = time.perf_counter()
    dtype = torch.float64
    if pinned_vertices is not None and np.asarray(pinned_vertices).shape != (len(instance.vertices),):
        raise NeurokInputError(f"pinned_vertices must have shape ({len(instance.vertices)},), got "
                               f"{np.asarray(pinned_vertices).shape}")
    bindings = bind_actions(instance.vertices, instance.faces, conditions, settings, surface_index(instance))
    learned = learned_kinematic_map(instance, settings.simulation_points, settings.mass, settings.coordinates,
                                    settings.inertia_ratio, "fd", settings.seed, dtype, bindings.surface,
                                    pin_selector(settings, instance.vertices, instance.faces, pinned_vertices))
    kmap = learned.kmap
    device = kmap.masses.device
    k = kmap.num_coords
    masses = kmap.masses.double().cpu().numpy()
    centre = masses @ learned.rest_positions.double().cpu().numpy() / masses.sum()
    carried = not _pins_fix_a_frame(settings, instance.vertices, pinned_vertices)

    def carry(inner: KinematicMap) -> KinematicMap:
        return carried_map(inner, centre) if carried else inner

    contacts = (at_points([learned.num_samples + i for i in bindings.contact_index])
                if bindings.contact_index else None)
    derivatives = resolve_derivatives(kmap, settings.derivatives)
    # the decoder runs on the model's device; a polynomial surrogate is solved on the CPU (surrogate.py)
    solver = SOLVER_DEVICE if settings.dynamics_map == "polynomial" else device
    forces = _forces(learned, settings, conditions, bindings, contacts, dtype, solver)

    moving = starts_moving(conditions, bindings)
    surrogate = (fit_surrogate(kmap, settings.surrogate_degree, settings.surrogate_radius, settings.seed)
                 if settings.dynamics_map == "polynomial" else None)
    velocity_map = carry(kmap)
    q0 = torch.zeros(velocity_map.num_coords, dtype=dtype, device=velocity_map.masses.device)
    qdot0 = torch.zeros_like(q0)
    velocity_fit = None
    if moving:
        requested = torch.as_tensor(conditions.velocities, dtype=dtype, device=q0.device)
        with torch.no_grad():
            velocity_fit = contact_initial_velocity(velocity_map, contacts, requested, q0)
        qdot0 = velocity_fit.qdot0

    frames = settings.frame_times()
    nodes, interpolate = _solver_nodes(settings, frames)
    node_times = torch.as_tensor(nodes, dtype=dtype, device=solver)
    q0_start, qdot0_start = q0, qdot0  # on velocity_map's device
    q0, qdot0 = q0.to(solver), qdot0.to(solver)

    def solve(inner_map: KinematicMap, locating: bool = False) -> tuple:
        """The carried map's motion; a locating solve (it only shows a refit where to sample) leaves
        the carrier out, with the strain energy as a spring toward the rest shape."""
        with torch.no_grad():
            rest = inner_map.positions(torch.zeros_like(q0[:k])).to(solver)
        if locating:
            solver_map, start, rate = inner_map, q0[:k], qdot0[:k]
            potentials = learned.potentials(settings.gravity, settings.stiffness + settings.anchor_stiffness,
                                            settings.barrier, rest, settings.pin_stiffness)
        else:
            solver_map, start, rate = carry(inner_map), q0, qdot0
            strain = settings.stiffness if carried else 0.0
            potentials = learned.potentials(settings.gravity, settings.anchor_stiffness + settings.stiffness - strain,
                                            settings.barrier, rest, settings.pin_stiffness)
            if strain:
                potentials.extra = CarriedSpring(solver_map.analytic, strain, rest)
        # the carrier's inertia (kg) dwarfs the latent directions' (down to 1e-6 of it): a regulariser
        # relative to the mean diagonal would swamp them
        system = LagrangianSystem(solver_map, potentials, damping=settings.damping, forces=forces,
                                  tikhonov=(FREE_BODY_TIKHONOV if carried and not locating
                                            else LagrangianSystem.tikhonov))
        if locating:  # rk4, omega h <= 1 for the elastic spring
            spring = potentials.stiffness + potentials.pin_stiffness  # 0 without pinned points
            step = min(LOCATING_STEP, 1.0 / math.sqrt(spring)) if spring else LOCATING_STEP
            return system, simulate(system, start, rate, node_times, method="rk4", step_size=step,
                                    should_stop=should_stop)
        try:  # only the final solve reports progress: the locating ones are short
            return system, simulate(system, start, rate, node_times, method=settings.method,
                                    step_size=settings.step_size, rtol=settings.rtol, atol=settings.atol,
                                    should_stop=should_stop, progress=progress)
        except RuntimeError as exc:  # the adaptive integrator gave up (step size underflow, too many steps)
            raise NeurokInputError(f"the integration failed: {exc}; try method rk4 with a step_size, "
                                   f"or a larger stiffness or damping") from exc

    if surrogate is not None:
        rounds = settings.surrogate_refinements
        # the solves that only show the refits where to sample take fixed rk4 steps (solve, locating=True)
        system, trajectory = solve(surrogate.kmap, locating=rounds > 0)
        for round_ in range(rounds):
            if should_stop is not None and should_stop():
                raise Cancelled("the simulation was stopped while refining the surrogate")
            surrogate = refine_surrogate(kmap, surrogate, trajectory.q[:, :k], seed=settings.seed + 1 + round_)
            system, trajectory = solve(surrogate.kmap, locating=round_ + 1 < rounds)
    else:
        system, trajectory = solve(kmap)
    if not (torch.isfinite(trajectory.q).all() and torch.isfinite(trajectory.qdot).all()):
        bad = int((~torch.isfinite(trajectory.q).all(1)).nonzero()[0])
        raise NeurokInputError(f"the simulation diverged (non-finite state at t = {nodes[bad]:.3f} s); "
                               f"use a smaller step_size or a larger stiffness")
    with torch.no_grad():
        if interpolate:
            q_f, qdot_f = interpolate_states(trajectory.times, trajectory.q, trajectory.qdot,
                                             torch.as_tensor(frames, dtype=dtype, device=solver))
            x_f, xdot_f = positions_and_velocities(system.kmap, q_f, qdot_f)
            kinetic = 0.5 * torch.einsum("n,tnd,tnd->t", system.kmap.masses, xdot_f, xdot_f)
            potential = potential_energy(system.potentials, x_f, q_f, system.kmap.masses)
            node_t = trajectory.times.cpu().numpy()
            work = np.interp(frames, node_t, trajectory.work.cpu().numpy())
            dissipated = np.interp(frames, node_t, trajectory.dissipated.cpu().numpy())
        else:
            q_f, x_f = trajectory.q, trajectory.points
            kinetic, potential = trajectory.kinetic, trajectory.potential
            work, dissipated = trajectory.work.cpu().numpy(), trajectory.dissipated.cpu().numpy()
    energy = torch.stack([kinetic, potential, kinetic + potential], dim=1).cpu().numpy()
    residual = _contact_velocity_residual(velocity_map, contacts, conditions, q0_start, qdot0_start)
    surrogate_report = None
    if surrogate is not None:
        surrogate_report = {"degree": surrogate.pmap.degree, "samples": int(len(surrogate.q)),
                            "fit_rms_m": surrogate.pmap.fit_rms, "fit_seconds": round(surrogate.seconds, 4),
                            "frame_error": frame_error(kmap, surrogate.pmap, q_f[:, :k], learned.num_samples)}
    simulated = time.perf_counter()

    q_in = q_f[:, :k]
    q_instance = learned.instance_coordinates(q_in)
    with torch.no_grad():
        latents = learned.latents(q_in.to(device))
    vertices, mode = _output_frames(instance, learned, latents, settings)
    if carried:  # the carrier's rigid motion of the whole
        rotation, translation = system.kmap.analytic.rigid_motion(q_f)
        vertices = (np.einsum("tij,tnj->tni", rotation, vertices) + translation[:, None]).astype(np.float32)
        q_instance = torch.cat([q_instance.to(q_f.dtype), q_f[:, k:].to(q_instance.device)], dim=1)
    decoded = time.perf_counter()
    seconds = {"encode": instance.seconds, "simulate": simulated - started, "decode": decoded - simulated}
    summary = _summary(instance, learned, settings, trajectory, energy, residual, velocity_fit, bindings, derivatives,
                       mode, interpolate, q_f, x_f, surrogate_report, seconds)
    summary["free_body"] = carried
    return Prediction(vertices=vertices, faces=np.asarray(instance.faces), times=frames,
                      q=q_instance.cpu().numpy(), energy=energy, work=np.asarray(work),
                      dissipated=np.asarray(dissipated), points=x_f.float().cpu().numpy(),
                      trajectory=trajectory, summary=summary)


def _pins_fix_a_frame(settings: SimulationSettings, vertices, pinned_vertices) -> bool:
    """Whether the held mesh vertices (pin boxes, pinned_vertices) fix a frame (not all on one line):
    the map is then held in that frame exactly (learned_map) and no free body carries it; pins along
    a line (a cloth's edge) leave the carrier free, their springs holding the points."""
    held = np.zeros(len(vertices), dtype=bool)
    for inside in pinned_by_boxes(settings, vertices):
        held |= inside
    if pinned_vertices is not None:
        held |= np.asarray(pinned_vertices, dtype=bool).reshape(-1)
    return bool(held.any()) and fixes_a_frame(torch.as_tensor(np.asarray(vertices, dtype=np.float64)[held]))


def _output_frames(instance, learned: LearnedMap, latents: torch.Tensor, settings: SimulationSettings
                   ) -> tuple[np.ndarray, str]:
    """decode_frames for latents (T, k), then, with held points, moved into the held part's frame as
    the map's points are: (T, n, 3) float32, mesh frame, and the decoding mode."""
    vertices, mode = decode_frames(instance, latents, settings.output_points, settings.seed)
    if learned.held_alignment is not None:
        with torch.no_grad():
            rotation, translation = learned.held_alignment(latents)
        vertices = apply_rigid(rotation.cpu(), translation.cpu(), torch.as_tensor(vertices, dtype=torch.float64))
        vertices = vertices.numpy().astype(np.float32)
    return vertices, mode


def _contact_velocity_residual(kmap, contacts, conditions, q0, qdot0) -> Optional[dict]:
    """The boundary condition at t = 0, checked on the simulated state: the contacts' velocity
    J_c qdot0 (from a fresh difference of the map along qdot0) against the requested velocities."""
    if contacts is None:
        return None
    with torch.no_grad():
        _, xdot = positions_and_velocities(kmap, q0[None], qdot0[None])
    achieved = contact_positions(contacts, xdot[0]).cpu().numpy()
    requested = np.asarray(conditions.velocities, dtype=np.float64)
    error = float(np.linalg.norm(achieved - requested))
    speed = float(np.linalg.norm(requested))
    return {"absolute": error, "relative": error / speed if speed > 0 else 0.0, "requested_speed": speed,
            "achieved": achieved.tolist()}


def _summary(instance, learned, settings, trajectory, energy, residual, velocity_fit, bindings, derivatives, mode,
             interpolate, q_f, x_f, surrogate, seconds) -> dict:
    seconds = {k: round(float(v), 4) for k, v in seconds.items()}
    seconds["total"] = round(sum(seconds.values()), 4)
    samples = learned.num_samples
    rest = learned.rest_positions[:samples].to(x_f.device)
    displacement = torch.linalg.vector_norm(x_f[:, :samples] - rest, dim=-1)
    contact_count = len(bindings.contact_index)
    summary = {
        "frames": int(len(energy)),
        "duration_s": settings.duration,
        "fps": settings.fps,
        "energy_drift": trajectory.energy_drift(),
        "energy_drift_note": "max |E - E0 - W + D| over the energy exchanged, at the solver's states",
        "energy_initial_j": float(energy[0, 2]),
        "energy_final_j": float(energy[-1, 2]),
        "contact_velocity_residual": None if residual is None else residual["relative"],
        "contact_velocity_residual_m_s": None if residual is None else residual["absolute"],
        "contact_velocity_achieved_m_s": None if residual is None else residual["achieved"],
        "contact_velocity_fit_residual": None if velocity_fit is None else velocity_fit.relative,
        "contact_surface_distance_m": bindings.distance[:contact_count].tolist() if contact_count else None,
        "contact_nearest_sample_m": (nearest_sample_distance(learned.samples.points, bindings.surface[:contact_count])
                                     .tolist() if contact_count else None),
        "push_surface_distance_m": bindings.distance[contact_count:].tolist() if bindings.push_index else None,
        "k_q": instance.k_q,
        "simulated_coordinates": learned.num_coords, "chart": "latent",
        "simulation_points": samples,
        "pinned_points": int(learned.pinned[:samples].sum()) if learned.pinned is not None else 0,
        "dynamics_map": settings.dynamics_map,
        "derivatives": "analytic" if surrogate is not None else derivatives,
        "surrogate": surrogate,
        "derivative_timings_s": {k: round(float(v), 4) for k, v in learned.kmap.timings.items()},
        "method": settings.method,
        "step_size_s": settings.step_size,
        "solver_nodes": int(trajectory.times.numel()),
        "interpolated_frames": bool(interpolate),
        "rhs_evaluations": trajectory.rhs_evaluations,
        "output_decoding": mode,
        "max_abs_q": float(q_f.abs().max()),
        "max_point_displacement_m": float(displacement.max()),
        "seconds": seconds,
    }
    return summary
