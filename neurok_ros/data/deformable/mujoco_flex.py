"""Simulate one MuJoCo 4 `flexcomp` (dim=3 soft solid or dim=2 cloth) headless and record its
render surface at requested times.

The flex is written as a `type="direct"` flexcomp, so its vertices are exactly the given points, in
order (body `flex_<i>` for an unpinned point i; pinned points live in the static parent body). The
parent body sits at the world origin with identity orientation, so each vertex's three slide joints
are along the world axes and its velocity is read straight from qvel.

Settings that matter (MuJoCo 4.0.0, checked here):
  - integrator="discrete": the only integrator that treats flex elasticity implicitly in position;
    `implicit`/`implicitfast` refuse flex elasticity and `Euler` needs sub-millisecond steps. With it
    a 10 ms timestep is stable for every generator here.
  - elastic2d="both" for cloth: without stretch and bend elasticity a sheet free-falls.
  - iterations=2000 with tolerance 1e-6: the smooth (M + hD + h^2 K) solve is iterative, and stiff
    or slender 3D flexes need several hundred iterations; at 100-300 it stops under-converged
    (MuJoCo's "Inertia matrix ... singular" warning) and the trajectories drift by centimetres. The
    cap costs nothing when the solve converges earlier.
  - dof="quadratic" for beams and stems: bending without the locking of linear tetrahedra (about 2x
    the sag of a "full" flex of the same mesh) and 3-4x faster. Interpolated flexes with 2+ cells
    per axis were seen to explode on hitting the ground, so contact scenes use dof="full".
  - solver: CG for soft solids and contact-free cloth (1.5-3x faster than Newton here), Newton for
    cloth lying on the ground (faster with its many contacts). The flexcomp's parent body must be
    named ("Parent body must have name" otherwise); MuJoCo enums are cast with int().
  - contact is switched off entirely (contype = conaffinity = 0) unless a ground plane is asked for.
  - mocap bodies may not be flex parents when the flex has elasticity, so a moving grip is a mocap
    body tied to the gripped vertices (or grid nodes) by `connect` equalities.
  - MuJoCo warnings go to a collecting handler during a run (recording.diagnostics), not to
    ./MUJOCO_LOG.TXT.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import mujoco
import numpy as np

from neurok_ros.data.deformable.flex_meshes import tetrahedra_boundary

FLEX_NAME = "flex"

# (t seconds, x (n, 3) m, v (n, 3) m/s) -> forces (n, 3) N on the flex vertices.
ForceField = Callable[[float, np.ndarray, np.ndarray], np.ndarray]
# t seconds -> displacement (3,) m of a grip from where it starts.
GripPath = Callable[[float], np.ndarray]


class FlexSimulationError(RuntimeError):
    """A flex simulation that diverged (NaN, runaway positions, or MuJoCo reset a bad state)."""


@dataclass(frozen=True)
class FlexBody:
    """A deformable body. points (n, 3) m world frame; elements (m, dim+1) point ids.

    mass kg (spread equally over the points, as flexcomp does); young Pa; poisson [0, 0.5);
    damping s (Rayleigh, scales the stiffness); thickness m (dim=2 only); radius m (collision skin).
    dof: "full" (3 dofs per point) or "quadratic"/"trilinear" (dim=3 only: the points follow an
    interpolation grid of `cellcount` cells over their bounding box, see `dof_positions`).
    pinned (k,) bool over the dof positions: points fixed to the world ("full") or grid nodes.
    velocity (3,) m/s and spin (3,) rad/s about the centroid: initial rigid velocity.
    """

    points: np.ndarray
    elements: np.ndarray
    dim: int
    mass: float
    young: float
    poisson: float
    damping: float
    thickness: float = 0.0
    radius: float = 0.0
    dof: str = "full"
    cellcount: tuple = (1, 1, 1)
    pinned: np.ndarray | None = None
    velocity: tuple = (0.0, 0.0, 0.0)
    spin: tuple = (0.0, 0.0, 0.0)

    @property
    def interpolated(self) -> bool:
        return self.dof in ("quadratic", "trilinear")

    def node_count(self) -> tuple:
        """Interpolation nodes per axis: order * cellcount + 1."""
        order = 2 if self.dof == "quadratic" else 1
        return tuple(order * int(c) + 1 for c in self.cellcount)


def dof_positions(body: FlexBody) -> np.ndarray:
    """Rest positions (k, 3) of what carries the dofs: the points ("full"), or the interpolation
    grid nodes spanning the points' bounding box, z varying fastest, then y, then x."""
    if not body.interpolated:
        return np.asarray(body.points, dtype=np.float64)
    low, high = body.points.min(axis=0), body.points.max(axis=0)
    axes = [np.linspace(lo, hi, c) for lo, hi, c in zip(low, high, body.node_count())]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)


def _dof_body_name(body: FlexBody, i: int) -> str:
    if not body.interpolated:
        return f"{FLEX_NAME}_{i}"
    _, ny, nz = body.node_count()
    return f"{FLEX_NAME}_{i // (ny * nz)}_{(i // nz) % ny}_{i % nz}"


@dataclass(frozen=True)
class Grip:
    """A moving gripper holding unpinned dof positions `ids` (points for dof "full", grid nodes
    otherwise; see `dof_positions`); path(t) -> (3,) displacement from the start, metres."""

    ids: tuple
    path: GripPath


@dataclass(frozen=True)
class FlexLoads:
    """gravity (3,) m/s^2; ground_height z of a ground plane (None: no contact at all); friction;
    forces: optional force field on the flex vertices (for interpolated flexes it acts on the grid
    nodes through the transposed interpolation weights, i.e. with the same virtual work);
    grips: moving grippers."""

    gravity: tuple = (0.0, 0.0, -9.81)
    ground_height: float | None = None
    friction: float = 0.8
    forces: ForceField | None = None
    grips: tuple = field(default_factory=tuple)


@dataclass(frozen=True)
class SimSettings:
    """timestep s; solver; tolerance and iterations of the solver; max_displacement m: any vertex
    further than this from its rest position means the simulation blew up."""

    timestep: float = 0.01
    solver: str = "CG"
    tolerance: float = 1e-6
    iterations: int = 2000
    max_displacement: float = 10.0


@dataclass(frozen=True)
class FlexRecording:
    """Render surface of a simulated flex.

    rest (s, 3) m: surface vertices in the undeformed initial state; faces (F, 3) into them;
    frames (T, s, 3) m; times (T,) s; pinned (s,) bool; flex_ids (s,): flex point id of each
    surface vertex; diagnostics: steps, timestep, dofs, and how many steps MuJoCo flagged its
    effective-metric solve as under-converged (mjWARN_INERTIA).
    """

    rest: np.ndarray
    faces: np.ndarray
    frames: np.ndarray
    times: np.ndarray
    pinned: np.ndarray
    flex_ids: np.ndarray
    diagnostics: dict = field(default_factory=dict)


def _numbers(values) -> str:
    return " ".join(f"{float(v):.9g}" for v in np.asarray(values).ravel())


def flex_mjcf(body: FlexBody, loads: FlexLoads, settings: SimSettings) -> str:
    """MJCF text of a scene with the flex, an optional ground plane and grips (mocap bodies)."""
    positions = dof_positions(body)
    pinned = np.zeros(len(positions), bool) if body.pinned is None else np.asarray(body.pinned, bool)
    if pinned.shape != (len(positions),):
        raise ValueError(f"pinned has {pinned.shape} entries, expected one per dof position ({len(positions)})")
    elasticity = f'young="{body.young:.9g}" poisson="{body.poisson:.9g}" damping="{body.damping:.9g}"'
    if body.dim == 2:
        elasticity += f' thickness="{body.thickness:.9g}" elastic2d="both"'
    if loads.ground_height is None:
        contact = 'contype="0" conaffinity="0"'
        ground = ""
    else:
        contact = f'condim="3" friction="{loads.friction:.9g}" solref="0.01 1"'
        ground = (f'<geom name="ground" type="plane" size="0 0 1" pos="0 0 {loads.ground_height:.9g}" '
                  f'friction="{loads.friction:.9g}"/>')
    interpolation = (f'dof="{body.dof}" cellcount="{" ".join(str(int(c)) for c in body.cellcount)}"'
                     if body.interpolated else "")
    pin = f'<pin id="{" ".join(str(i) for i in np.flatnonzero(pinned))}"/>' if pinned.any() else ""
    grips, equalities = [], []
    for g, grip in enumerate(loads.grips):
        ids = np.asarray(grip.ids, dtype=np.int64)
        if pinned[ids].any():
            raise ValueError("a gripped dof position cannot also be pinned")
        grips.append(f'<body name="grip{g}" mocap="true" pos="{_numbers(positions[ids].mean(axis=0))}"/>')
        equalities += [f'<connect body1="{_dof_body_name(body, int(i))}" body2="grip{g}" anchor="0 0 0" '
                       f'solref="0.01 1"/>' for i in ids]
    radius = max(body.radius, 1e-4) if body.dim == 2 else body.radius
    return f"""<mujoco model="neurok_flex">
  <option timestep="{settings.timestep:.9g}" integrator="discrete" solver="{settings.solver}"
          tolerance="{settings.tolerance:.9g}" iterations="{settings.iterations}"
          gravity="{_numbers(loads.gravity)}"/>
  <worldbody>
    {ground}
    {''.join(grips)}
    <body name="flex_parent">
      <flexcomp name="{FLEX_NAME}" type="direct" dim="{body.dim}" radius="{radius:.9g}" {interpolation}
                mass="{body.mass:.9g}" point="{_numbers(body.points)}"
                element="{' '.join(str(int(i)) for i in np.asarray(body.elements).ravel())}">
        <elasticity {elasticity}/>
        <contact selfcollide="none" {contact}/>
        {pin}
      </flexcomp>
    </body>
  </worldbody>
  <equality>{''.join(equalities)}</equality>
</mujoco>"""


def render_surface(body: FlexBody) -> tuple[np.ndarray, np.ndarray]:
    """Fixed render topology of a flex: (surface point ids (s,), faces (F, 3) into those ids).

    dim=3: the boundary triangles of the tetrahedra, outward; dim=2: the sheet's triangles.
    """
    elements = np.asarray(body.elements, dtype=np.int64)
    faces = tetrahedra_boundary(elements, body.points) if body.dim == 3 else elements
    ids, compact = np.unique(faces, return_inverse=True)
    return ids, compact.reshape(faces.shape).astype(np.int64)


def frame_schedule(duration: float, num_frames: int, timestep: float) -> tuple[np.ndarray, float]:
    """Step index of every frame over [0, duration] and the timestep actually used.

    The timestep shrinks when frames are denser than it, so times always increase strictly.
    """
    if num_frames < 2:
        raise ValueError("need at least 2 frames")
    dt = min(timestep, duration / (num_frames - 1))
    total = int(np.ceil(duration / dt - 1e-9))
    steps = np.round(np.linspace(0, total, num_frames)).astype(np.int64)
    return steps, dt


def check_flex_state(data, x, rest, settings, time):
    """Raise FlexSimulationError when MuJoCo reset an unstable state or the flex left its bounds."""
    bad = [int(w) for w in (mujoco.mjtWarning.mjWARN_BADQACC, mujoco.mjtWarning.mjWARN_BADQPOS,
                            mujoco.mjtWarning.mjWARN_BADQVEL) if data.warning[int(w)].number]
    if bad:
        raise FlexSimulationError(f"MuJoCo reset an unstable state (warnings {bad}) at t={time:.3f} s")
    if not np.all(np.isfinite(x)):
        raise FlexSimulationError(f"flex positions became NaN/inf at t={time:.3f} s")
    drift = float(np.max(np.linalg.norm(x - rest, axis=1)))
    if drift > settings.max_displacement:
        raise FlexSimulationError(f"flex vertex moved {drift:.3g} m > {settings.max_displacement:.3g} m "
                                  f"at t={time:.3f} s")


def dof_bodies(model, body: FlexBody) -> np.ndarray:
    """MuJoCo body id of every dof position (the static parent for pinned ones)."""
    if body.interpolated:
        adr = model.flex_nodeadr[0]
        return model.flex_nodebodyid[adr: adr + model.flex_nodenum[0]].copy()
    adr = model.flex_vertadr[0]
    return model.flex_vertbodyid[adr: adr + model.flex_vertnum[0]].copy()


def interpolation_weights(model, data, dof_body: np.ndarray, free: np.ndarray) -> np.ndarray:
    """W (n vertices, k dof positions) with vertex = sum_j W_ij node_j; identity for "full" flexes.

    The interpolation is linear in the node positions, so each free node's column is read off by
    moving that node by 1 m along x. Pinned nodes' columns stay 0: they never move."""
    n = model.flex_vertnum[0]
    mujoco.mj_fwdPosition(model, data)
    base = data.flexvert_xpos[:, 0].copy()
    weights = np.zeros((n, len(dof_body)))
    qpos0 = data.qpos.copy()
    for j in np.flatnonzero(free):
        data.qpos[:] = qpos0
        data.qpos[model.jnt_qposadr[model.body_jntadr[dof_body[j]]]] += 1.0
        mujoco.mj_fwdPosition(model, data)
        weights[:, j] = data.flexvert_xpos[:, 0] - base
    data.qpos[:] = qpos0
    mujoco.mj_fwdPosition(model, data)
    return weights


@contextmanager
def collect_mujoco_warnings(messages: list):
    """Route MuJoCo warnings into `messages` instead of stderr and ./MUJOCO_LOG.TXT, then restore
    the previous handler (process-global, so one simulation per process at a time)."""
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(messages.append)
    try:
        yield messages
    finally:
        mujoco.set_mju_user_warning(previous)


def simulate_flex(body: FlexBody, loads: FlexLoads, settings: SimSettings, duration: float,
                  num_frames: int) -> FlexRecording:
    """Run the flex from rest for `duration` s and record `num_frames` evenly spaced frames
    (frame 0 at t = 0) of its render surface. Raises FlexSimulationError when it blows up.
    MuJoCo's warnings end up in recording.diagnostics (the first 5 and their count)."""
    messages = []
    with collect_mujoco_warnings(messages):
        recording = _simulate(body, loads, settings, duration, num_frames)
    recording.diagnostics["warnings"] = messages[:5]
    recording.diagnostics["warning_count"] = len(messages)
    return recording


def _simulate(body: FlexBody, loads: FlexLoads, settings: SimSettings, duration: float,
              num_frames: int) -> FlexRecording:
    steps, dt = frame_schedule(duration, num_frames, settings.timestep)
    if dt != settings.timestep:
        settings = SimSettings(dt, settings.solver, settings.tolerance, settings.iterations,
                               settings.max_displacement)
    model = mujoco.MjModel.from_xml_string(flex_mjcf(body, loads, settings))
    data = mujoco.MjData(model)
    dof_body = dof_bodies(model, body)
    free = model.body_dofnum[dof_body] == 3
    dof = model.body_dofadr[dof_body[free]][:, None] + np.arange(3)[None, :]
    pinned = np.zeros(len(dof_body), bool) if body.pinned is None else np.asarray(body.pinned, bool)
    if body.interpolated:
        weights = interpolation_weights(model, data, dof_body, free)
        weights[np.abs(weights) < 1e-12] = 0.0
        vertex_pinned = ~np.any(weights[:, free] != 0.0, axis=1)
    else:
        weights = None
        vertex_pinned = pinned
    mujoco.mj_forward(model, data)
    start = data.xpos[dof_body[free]]
    centre = np.asarray(body.points, float).mean(axis=0)
    data.qvel[dof] = np.asarray(body.velocity, float) + np.cross(np.asarray(body.spin, float), start - centre)
    grip_start = data.mocap_pos.copy()

    surface_ids, faces = render_surface(body)
    mujoco.mj_forward(model, data)
    rest = data.flexvert_xpos.copy()
    n = len(rest)
    frames = np.empty((num_frames, len(surface_ids), 3))
    dof_velocity = np.zeros((len(dof_body), 3))
    frame = 0
    for step in range(int(steps[-1]) + 1):
        time = step * dt
        for g, grip in enumerate(loads.grips):
            data.mocap_pos[g] = grip_start[g] + np.asarray(grip.path(time), float)
        mujoco.mj_step1(model, data)
        x = data.flexvert_xpos
        while frame < num_frames and steps[frame] == step:
            check_flex_state(data, x, rest, settings, time)
            frames[frame] = x[surface_ids]
            frame += 1
        if step == steps[-1]:
            break
        if loads.forces is not None:
            dof_velocity[free] = data.qvel[dof]
            velocity = dof_velocity if weights is None else weights @ dof_velocity
            force = np.asarray(loads.forces(time, x.copy(), velocity), float).reshape(n, 3)
            dof_force = force if weights is None else weights.T @ force
            data.xfrc_applied[:] = 0.0
            np.add.at(data.xfrc_applied[:, :3], dof_body[free], dof_force[free])
        mujoco.mj_step2(model, data)
    underconverged = int(data.warning[int(mujoco.mjtWarning.mjWARN_INERTIA)].number)
    return FlexRecording(rest=rest[surface_ids], faces=faces, frames=frames, times=steps * dt,
                         pinned=vertex_pinned[surface_ids], flex_ids=surface_ids,
                         diagnostics={"steps": int(steps[-1]), "timestep": dt, "dofs": int(model.nv),
                                      "underconverged_steps": underconverged})
