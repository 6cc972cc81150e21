"""MuJoCo flex ground truth for a poked soft object (issue 44): the same mesh, pins and poke as a
prediction gets, simulated as a 3D elastic solid.

    V, F, volume = beam_volume(0.4, 0.08, 0.08)          # or blob_volume(...), or any closed (V, F)
    ref = flex_reference(V, F, FlexMaterial(), pokes=(FlexPoke((0.4, 0, 0), force=(0, 4, 0), t1=0.2),),
                         pins=(((-1e-3, -1, -1), (1e-3, 1, 1)),), volume=volume)
    ref.vertices   # (T, n, 3) float32, metres, the mesh's frame and vertex order, frames at i / fps

The solid: a `type="direct"` flexcomp (dim=3) whose points are the mesh's vertices followed by
interior points, and whose elements are tetrahedra over them (`volume`; without one, a Delaunay
tetrahedralisation of the vertices and an interior grid, cut to the mesh by the winding number,
`tetrahedralise`). Its `<elasticity>` is the material's Young's modulus, Poisson ratio and MuJoCo's
Rayleigh damping (seconds: stiffness-proportional, so mode i is damped at zeta_i = damping * omega_i / 2);
its mass is density * the mesh's volume, spread by flexcomp. The scene is written and stepped by
data/deformable/mujoco_flex.py (integrator="discrete", solver CG, contact off): see the facts
there. dof="quadratic" (default) moves the vertices with a quadratic interpolation grid over their
bounding box (`cellcount` cells, by default about cubic cells): a beam bends as Euler-Bernoulli says
(test/test_flex_reference.py), where linear tetrahedra ("full") lock at about half the sag.

The poke is the action a prediction gets (simulation/settings.PushSpec, dynamics ContactConditions):
  force     (3,) N at the surface point nearest `point`, on for t0 <= t < t1: spread over the
            vertices of the face that point lies on by its barycentric weights (the same virtual
            work as a point force there), and from them to the grid nodes by the transposed
            interpolation weights. The impulse is exact: steps straddling t0 or t1 get their share.
  velocity  (3,) m/s at t = 0 on the vertices within `radius` of that point (radius 0: that face's
            vertices), a finger of that size; for interpolated dofs the grid-node velocities are the
            least-norm ones that give those vertices that velocity (the impulse response with equal
            node masses, as a contact velocity's least-kinetic-energy fit is).
Pins are axis-aligned boxes (lower (3,), upper (3,) m, or objects with .lower/.upper such as
simulation.settings.PinBox): the dof positions inside them (vertices for "full", grid nodes for
interpolated dofs) are fixed to the world. A box that holds none is refused.
Gravity is MuJoCo's `gravity` option, mesh frame (m/s^2); the parent body sits at the origin, so
the world frame is the mesh frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

import mujoco
import numpy as np

from neurok_ros.data.deformable.flex_meshes import grid_points, grid_tetrahedra, tetrahedra_boundary
from neurok_ros.data.deformable.mujoco_flex import (
    FlexBody,
    FlexLoads,
    SimSettings,
    check_flex_state,
    collect_mujoco_warnings,
    dof_bodies,
    dof_positions,
    flex_mjcf,
    interpolation_weights,
)

GRAVITY = (0.0, 0.0, -9.81)
MAX_TIMESTEP = 0.005  # s: the longest MuJoCo step; steps divide the frame interval exactly
MAX_CELLS = 8  # quadratic cells along one axis at most


@dataclass(frozen=True)
class FlexMaterial:
    """young Pa; poisson in [0, 0.5); density kg/m^3; damping s (MuJoCo's Rayleigh, stiffness-proportional).
    The default is a soft silicone rubber: E = 1 MPa, nu = 0.45, 1100 kg/m^3, damping 5 ms."""

    young: float = 1.0e6
    poisson: float = 0.45
    density: float = 1100.0
    damping: float = 0.005


@dataclass(frozen=True)
class FlexPoke:
    """point (3,) m near the surface (mesh frame); velocity (3,) m/s at t = 0; force (3,) N on for
    t0 <= t < t1 s; radius m of the velocity patch (0: the vertices of the face under the point)."""

    point: tuple
    velocity: tuple = (0.0, 0.0, 0.0)
    force: tuple = (0.0, 0.0, 0.0)
    t0: float = 0.0
    t1: float = 0.0
    radius: float = 0.0


@dataclass(frozen=True)
class Volume:
    """A tetrahedral volume of a surface mesh: points (N, 3) m whose first n are the mesh's vertices,
    in order; tets (m, 4) point ids."""

    points: np.ndarray
    tets: np.ndarray


@dataclass
class FlexReference:
    """vertices (T, n, 3) float32 m (mesh frame, vertex order); times (T,) s; faces (F, 3) of the input
    mesh; mass kg; pinned (n,) bool: vertices that the pins hold (they never move); diagnostics:
    dofs, steps, timestep, MuJoCo warnings, seconds."""

    vertices: np.ndarray
    times: np.ndarray
    faces: np.ndarray
    mass: float
    pinned: np.ndarray
    diagnostics: dict = field(default_factory=dict)


def surface_first(points: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray, Volume]:
    """(V (n, 3), F (F, 3), Volume) of a tetrahedral mesh: its boundary surface (outward faces) and the
    volume renumbered so that the boundary's vertices come first, in V's order."""
    points = np.asarray(points, dtype=np.float64)
    tets = np.asarray(tets, dtype=np.int64)
    boundary = tetrahedra_boundary(tets, points)
    surface = np.unique(boundary)
    inner = np.setdiff1d(np.arange(len(points)), surface)
    order = np.concatenate([surface, inner])
    new_id = np.empty(len(points), dtype=np.int64)
    new_id[order] = np.arange(len(points))
    return points[surface].copy(), new_id[boundary], Volume(points[order], new_id[tets])


def beam_volume(length: float = 0.4, width: float = 0.08, height: float = 0.08, points_across: int = 4,
                points_along: Optional[int] = None) -> tuple[np.ndarray, np.ndarray, Volume]:
    """A box beam along +x from x = 0 to x = length, cross-section centred on y = z = 0 (metres):
    (V, F, Volume) of a Kuhn-tetrahedralised grid with `points_across` points across and, by default,
    cells about as long as they are wide along it."""
    across = max(width, height) / (points_across - 1)
    along = points_along or int(math.ceil(length / across)) + 1
    count = (along, points_across, points_across)
    points = grid_points(count, (length, width, height))
    points[:, 0] += 0.5 * length
    return surface_first(points, grid_tetrahedra(count))


def blob_volume(size=(0.12, 0.12, 0.12), points: int = 7) -> tuple[np.ndarray, np.ndarray, Volume]:
    """A soft ball (ellipsoid of diameters `size`, metres) centred at 0: (V, F, Volume), the project's
    generator (data/deformable/soft_blob.blob_mesh) with `points` grid points along its longest axis."""
    from neurok_ros.data.deformable.soft_blob import blob_mesh

    grid, tets, _ = blob_mesh("ball", size, points)
    return surface_first(grid, tets)


def tetrahedralise(vertices: np.ndarray, faces: np.ndarray, spacing: Optional[float] = None) -> Volume:
    """A tetrahedral Volume of a closed triangle mesh: Delaunay tetrahedra of its vertices and of the grid
    points (`spacing` m apart, default a sixth of the smallest bounding-box side) inside it at least half
    a spacing from its vertices, kept where their centroid is inside the mesh (generalised winding
    number). Exact for convex meshes; a concave one loses or gains thin slivers along its surface."""
    from scipy.spatial import Delaunay, cKDTree

    from neurok_ros.geometry.occupancy import inside_mesh

    V = np.asarray(vertices, dtype=np.float64)
    low, high = V.min(axis=0), V.max(axis=0)
    spacing = float(spacing or np.min(high - low) / 6.0)
    axes = [np.arange(lo + 0.5 * spacing, hi, spacing) for lo, hi in zip(low, high)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    if len(grid):
        grid = grid[inside_mesh(V, faces, grid)]
        grid = grid[cKDTree(V).query(grid)[0] > 0.5 * spacing]
    points = np.concatenate([V, grid])
    tets = Delaunay(points).simplices.astype(np.int64)
    a, b, c, d = (points[tets[:, i]] for i in range(4))
    volume = np.abs(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a)) / 6.0
    keep = (volume > 1e-12 * np.prod(high - low)) & inside_mesh(V, faces, points[tets].mean(axis=1))
    return Volume(points, tets[keep])


def mesh_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Enclosed volume (m^3) of a closed triangle mesh (divergence theorem; either orientation)."""
    V = np.asarray(vertices, dtype=np.float64)
    tri = V[np.asarray(faces, dtype=np.int64)]
    return float(abs(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum()) / 6.0)


def default_cellcount(vertices: np.ndarray) -> tuple:
    """Quadratic cells per axis: about cubic cells, one across the smallest side, at most MAX_CELLS."""
    extent = np.ptp(np.asarray(vertices, dtype=np.float64), axis=0)
    return tuple(int(np.clip(round(e / max(extent.min(), 1e-12)), 1, MAX_CELLS)) for e in extent)


def closest_surface_point(vertices: np.ndarray, faces: np.ndarray, point) -> tuple[int, np.ndarray, float]:
    """(face id, barycentric weights (3,), distance m) of the surface point nearest `point` (3,)."""
    import trimesh

    tri = np.asarray(vertices, dtype=np.float64)[np.asarray(faces, dtype=np.int64)]
    query = np.repeat(np.asarray(point, dtype=np.float64).reshape(1, 3), len(tri), axis=0)
    nearest = trimesh.triangles.closest_point(tri, query)
    distance = np.linalg.norm(nearest - query, axis=1)
    f = int(np.argmin(distance))
    weights = trimesh.triangles.points_to_barycentric(tri[f:f + 1], nearest[f:f + 1])[0]
    return f, np.clip(weights, 0.0, 1.0) / np.clip(weights, 0.0, 1.0).sum(), float(distance[f])


def _box(pin) -> tuple[np.ndarray, np.ndarray]:
    if hasattr(pin, "lower"):
        return np.asarray(pin.lower, dtype=np.float64), np.asarray(pin.upper, dtype=np.float64)
    values = np.asarray(pin, dtype=np.float64).reshape(-1)
    return values[:3], values[3:]


def _frame_steps(duration: float, fps: float, max_timestep: float) -> tuple[np.ndarray, float]:
    """(step index of each frame i / fps, i = 0 .. round(duration fps)), timestep s: a whole number of
    steps per frame interval, none longer than max_timestep."""
    frames = int(round(duration * fps))
    per_frame = max(1, int(math.ceil((1.0 / fps) / max_timestep - 1e-9)))
    return np.arange(frames + 1) * per_frame, 1.0 / (fps * per_frame)


def flex_reference(vertices, faces, material: FlexMaterial = FlexMaterial(), pokes: Sequence[FlexPoke] = (),
                   pins: Sequence = (), gravity=GRAVITY, duration: float = 1.0, fps: float = 30.0,
                   volume: Optional[Volume] = None, dof: str = "quadratic", cellcount: Optional[tuple] = None,
                   max_timestep: float = MAX_TIMESTEP, iterations: int = 2000) -> FlexReference:
    """Simulate the closed mesh (vertices (n, 3) m, faces) as a MuJoCo flex solid from rest under gravity
    and the pokes, with the pins held, for `duration` s; frames at i / fps (module docstring)."""
    import time

    started = time.perf_counter()
    V = np.asarray(vertices, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64)
    n = len(V)
    volume = volume or tetrahedralise(V, F)
    if len(volume.points) < n or not np.allclose(volume.points[:n], V, atol=1e-9):
        raise ValueError("the volume's first points must be the mesh's vertices, in order")
    mass = material.density * mesh_volume(V, F)
    body = FlexBody(points=volume.points, elements=volume.tets, dim=3, mass=mass, young=material.young,
                    poisson=material.poisson, damping=material.damping, dof=dof,
                    cellcount=tuple(cellcount or default_cellcount(V)))
    nodes = dof_positions(body)
    pinned = np.zeros(len(nodes), dtype=bool)
    for i, pin in enumerate(pins):
        lower, upper = _box(pin)
        inside = np.all((nodes >= lower - 1e-9) & (nodes <= upper + 1e-9), axis=1)
        if not inside.any():
            raise ValueError(f"pin box {i} {lower.tolist()} - {upper.tolist()} holds no "
                             f"{'grid node' if body.interpolated else 'vertex'} of the flex")
        pinned |= inside
    body = replace(body, pinned=pinned)
    steps, dt = _frame_steps(duration, fps, max_timestep)
    # a blow-up: farther than ten sizes, a free fall and 10 m/s for the whole run
    runaway = (10.0 * float(np.ptp(V, axis=0).max()) + 0.5 * float(np.linalg.norm(gravity)) * duration ** 2
               + 10.0 * duration)
    settings = SimSettings(timestep=dt, iterations=iterations, max_displacement=runaway)
    messages: list = []
    with collect_mujoco_warnings(messages):
        model = mujoco.MjModel.from_xml_string(flex_mjcf(body, FlexLoads(gravity=tuple(gravity)), settings))
        data = mujoco.MjData(model)
        dof_body = dof_bodies(model, body)
        free = model.body_dofnum[dof_body] == 3
        dof_index = model.body_dofadr[dof_body[free]][:, None] + np.arange(3)[None, :]
        if body.interpolated:
            weights = interpolation_weights(model, data, dof_body, free)
            weights[np.abs(weights) < 1e-12] = 0.0
        else:
            weights = np.eye(len(nodes))
        vertex_pinned = ~np.any(weights[:n][:, free] != 0.0, axis=1)

        node_force = []  # (t0, t1, (k, 3) N on the dof positions)
        node_velocity = np.zeros((len(nodes), 3))
        for poke in pokes:
            face, bary, _ = closest_surface_point(V, F, poke.point)
            if np.any(np.asarray(poke.force, dtype=np.float64) != 0) and poke.t1 > poke.t0:
                on_vertices = np.zeros((len(volume.points), 3))
                on_vertices[F[face]] = bary[:, None] * np.asarray(poke.force, dtype=np.float64)[None]
                node_force.append((float(poke.t0), float(poke.t1), weights.T @ on_vertices))
            velocity = np.asarray(poke.velocity, dtype=np.float64)
            if np.any(velocity != 0):
                snapped = bary @ V[F[face]]
                patch = (np.flatnonzero(np.linalg.norm(V - snapped, axis=1) <= poke.radius) if poke.radius > 0
                         else F[face])
                rows = weights[patch][:, free]
                solution = np.linalg.lstsq(rows, np.repeat(velocity[None], len(patch), axis=0), rcond=None)[0]
                node_velocity[np.flatnonzero(free)] += solution

        mujoco.mj_forward(model, data)
        data.qvel[dof_index] = node_velocity[free]
        mujoco.mj_forward(model, data)
        rest = data.flexvert_xpos.copy()
        frames = np.empty((len(steps), n, 3))
        frame = 0
        for step in range(int(steps[-1]) + 1):
            t = step * dt
            mujoco.mj_step1(model, data)
            if frame < len(steps) and steps[frame] == step:
                check_flex_state(data, data.flexvert_xpos, rest, settings, t)
                frames[frame] = data.flexvert_xpos[:n]
                frame += 1
            if step == steps[-1]:
                break
            data.xfrc_applied[:] = 0.0
            for t0, t1, force in node_force:
                share = max(0.0, min(t + dt, t1) - max(t, t0)) / dt  # of the step inside [t0, t1)
                if share > 0:
                    np.add.at(data.xfrc_applied[:, :3], dof_body[free], share * force[free])
            mujoco.mj_step2(model, data)
        underconverged = int(data.warning[int(mujoco.mjtWarning.mjWARN_INERTIA)].number)
    diagnostics = {"dofs": int(model.nv), "flex_points": int(len(volume.points)), "tets": int(len(volume.tets)),
                   "nodes": int(len(nodes)), "pinned_nodes": int(pinned.sum()), "dof": dof,
                   "cellcount": list(body.cellcount) if body.interpolated else None, "steps": int(steps[-1]),
                   "timestep": dt, "underconverged_steps": underconverged, "warnings": messages[:5],
                   "warning_count": len(messages), "seconds": round(time.perf_counter() - started, 4)}
    return FlexReference(vertices=frames.astype(np.float32), times=steps * dt, faces=F, mass=mass,
                         pinned=vertex_pinned, diagnostics=diagnostics)


def cantilever_theory(length: float, width: float, height: float, material: FlexMaterial,
                      gravity: float = 9.81) -> dict:
    """Euler-Bernoulli for a uniform cantilever of rectangular section (bending about the width axis,
    i.e. a vertical load on a beam `height` tall): static tip deflection under its own weight
    q L^4 / (8 E I) (m), first bending angular frequency 1.8751^2 sqrt(E I / (rho A L^4)) (rad/s), and
    the tip stiffness 3 E I / L^3 (N/m)."""
    area = width * height
    inertia = width * height ** 3 / 12.0
    q = material.density * area * gravity
    return {"tip_sag_m": q * length ** 4 / (8.0 * material.young * inertia),
            "omega1_rad_s": 1.87510407 ** 2 * math.sqrt(material.young * inertia / (material.density * area
                                                                                      * length ** 4)),
            "tip_stiffness_n_m": 3.0 * material.young * inertia / length ** 3}


def dominant_angular_frequency(frames: np.ndarray, rest: np.ndarray, times: np.ndarray,
                               skip: float = 0.0) -> float:
    """rad/s of a free vibration: the displacement (frames (T, n, 3) - rest (n, 3)) projected on its
    principal direction of motion over time (after `skip` s), minus its mean, timed by the mean
    spacing of its zero crossings (half periods, interpolated linearly). NaN with fewer than 3 crossings."""
    keep = np.asarray(times) >= skip
    d = (np.asarray(frames, dtype=np.float64)[keep] - np.asarray(rest, dtype=np.float64)[None]).reshape(
        int(keep.sum()), -1)
    d = d - d.mean(axis=0)
    _, _, vt = np.linalg.svd(d, full_matrices=False)
    signal = d @ vt[0]
    t = np.asarray(times, dtype=np.float64)[keep]
    crossings = np.flatnonzero(np.sign(signal[1:]) != np.sign(signal[:-1]))
    if len(crossings) < 3:
        return float("nan")
    at = t[crossings] - signal[crossings] * (t[crossings + 1] - t[crossings]) / (signal[crossings + 1]
                                                                                 - signal[crossings])
    return float(math.pi / np.mean(np.diff(at)))
