"""SimulationSettings: everything predict_motion needs besides the instance and the contacts.

Defaults live in config/simulation.yaml only: `default_settings()` reads them, and
`settings_from(overrides)` replaces some. Units: seconds, metres (mesh frame), kilograms, newtons.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from neurok_ros.config_files import config_path, load_yaml
from neurok_ros.errors import ActionError, NeurokInputError

METHODS = ("dp45", "rk4", "dopri5", "euler", "midpoint", "bosh3", "adaptive_heun", "fehlberg2", "dopri8")
DERIVATIVES = ("auto", "fd", "ad")
DYNAMICS_MAPS = ("polynomial", "decoder")


@dataclass(frozen=True)
class PushSpec:
    """A constant force `force` (3,) N at the surface point nearest `point` (3,) metres, mesh frame,
    on for t0 <= t <= t1 seconds."""

    point: tuple
    force: tuple
    t0: float
    t1: float

    def validate(self) -> "PushSpec":
        values = np.array([*self.point, *self.force, self.t0, self.t1], dtype=np.float64)
        if values.shape != (8,):
            raise ActionError(f"a push needs a point (3), a force (3), t0 and t1; got {values.size} numbers")
        if not np.all(np.isfinite(values)):
            raise ActionError("push point, force and times must be finite numbers")
        if not self.t1 >= self.t0:
            raise ActionError(f"push window must have t1 >= t0, got [{self.t0}, {self.t1}] s")
        return self


@dataclass(frozen=True)
class PinBox:
    """An axis-aligned box, lower (3,) and upper (3,) corners in metres, mesh frame: the surface
    inside it is held in place (a base on a table, a frame in a wall)."""

    lower: tuple
    upper: tuple

    def validate(self) -> "PinBox":
        values = np.array([*self.lower, *self.upper], dtype=np.float64)
        if values.shape != (6,) or not np.all(np.isfinite(values)):
            raise ActionError(f"a pin box needs 6 finite numbers X0 Y0 Z0 X1 Y1 Z1, got {values.tolist()}")
        if np.any(values[3:] < values[:3]):
            raise ActionError(f"a pin box needs X0 <= X1, Y0 <= Y1, Z0 <= Z1, got {values.tolist()}")
        return self

    def contains(self, points: np.ndarray) -> np.ndarray:
        """(N,) bool for points (N, 3)."""
        return np.all((points >= np.asarray(self.lower)) & (points <= np.asarray(self.upper)), axis=1)


@dataclass(frozen=True)
class SimulationSettings:
    """duration s; fps frames/s; gravity (3,) m/s^2; stiffness k_s 1/s^2 (the strain energy, zero for
    rigid motions); anchor_stiffness k_a 1/s^2 (a spring toward the input pose, 0 unless asked for);
    pin_stiffness k_pin 1/s^2 (on the surface inside the pins: PinBox tuple); damping c 1/s; mass kg;
    barrier k_p J per unit z^2; contact_tolerance (fraction of the bounding-box diagonal);
    drag_stiffness N/m; drag_damping N s/m;
    simulation_points; coordinates (max simulated directions); inertia_ratio; method (torchdiffeq);
    step_size s; rtol / atol (adaptive methods); derivatives "auto" | "fd" | "ad"; dynamics_map
    "polynomial" | "decoder" (what the solver differentiates: simulation/surrogate.py);
    surrogate_degree, surrogate_radius (latent units), surrogate_refinements; output_points;
    seed; articulated objects (the joints chart, simulation/articulated_chart.py): free_base (the root
    floats as a 6-DoF body instead of being anchored), joint_damping (N m s/rad or N s/m),
    joint_friction (N m or N), restitution of the joint limits in [0, 1]; pushes: PushSpec tuple."""

    duration: float
    fps: float
    gravity: tuple
    stiffness: float
    anchor_stiffness: float
    pin_stiffness: float
    damping: float
    mass: float
    barrier: float
    contact_tolerance: float
    drag_stiffness: float
    drag_damping: float
    simulation_points: int
    coordinates: Optional[int]
    inertia_ratio: float
    method: str
    step_size: float
    rtol: float
    atol: float
    derivatives: str
    dynamics_map: str
    surrogate_degree: int
    surrogate_radius: float
    surrogate_refinements: int
    output_points: int
    seed: int
    free_base: bool
    joint_damping: float
    joint_friction: float
    restitution: float
    pushes: tuple = ()
    pins: tuple = ()

    @property
    def num_frames(self) -> int:
        """T = round(duration * fps) + 1 (frames at t = 0, 1/fps, ..., duration)."""
        return int(round(self.duration * self.fps)) + 1

    def frame_times(self) -> np.ndarray:
        """(T,) seconds: i / fps, the last one set to `duration` exactly."""
        times = np.arange(self.num_frames, dtype=np.float64) / self.fps
        times[-1] = self.duration
        return times

    def validate(self) -> "SimulationSettings":
        """Raise NeurokInputError (ActionError for forces) naming the first bad value; return self."""
        def positive(name):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise NeurokInputError(f"{name} must be a positive number, got {value!r}")

        def non_negative(name):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise NeurokInputError(f"{name} must be a non-negative number, got {value!r}")

        for name in ("duration", "fps", "mass", "contact_tolerance", "step_size", "rtol", "atol",
                     "surrogate_radius"):
            positive(name)
        for name in ("stiffness", "anchor_stiffness", "pin_stiffness", "damping", "barrier", "drag_stiffness",
                     "drag_damping", "inertia_ratio", "joint_damping", "joint_friction"):
            non_negative(name)
        if not (isinstance(self.restitution, (int, float)) and 0.0 <= self.restitution <= 1.0):
            raise NeurokInputError(f"restitution must be between 0 and 1, got {self.restitution!r}")
        if not isinstance(self.free_base, bool):
            raise NeurokInputError(f"free_base must be true or false, got {self.free_base!r}")
        if len(self.gravity) != 3 or not all(math.isfinite(float(g)) for g in self.gravity):
            raise ActionError(f"gravity must be 3 finite numbers (m/s^2), got {list(self.gravity)}")
        if self.num_frames > 100_000:
            raise NeurokInputError(f"duration * fps = {self.num_frames - 1} frames is too many (max 100000)")
        if self.simulation_points < 4:
            raise NeurokInputError(f"simulation_points must be at least 4, got {self.simulation_points}")
        if self.output_points < 4:
            raise NeurokInputError(f"output_points must be at least 4, got {self.output_points}")
        if self.coordinates is not None and self.coordinates < 1:
            raise NeurokInputError(f"coordinates must be at least 1 (or null for all), got {self.coordinates}")
        if self.method not in METHODS:
            raise NeurokInputError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.derivatives not in DERIVATIVES:
            raise NeurokInputError(f"derivatives must be one of {DERIVATIVES}, got {self.derivatives!r}")
        if self.dynamics_map not in DYNAMICS_MAPS:
            raise NeurokInputError(f"dynamics_map must be one of {DYNAMICS_MAPS}, got {self.dynamics_map!r}")
        if not 1 <= self.surrogate_degree <= 8:
            raise NeurokInputError(f"surrogate_degree must be between 1 and 8, got {self.surrogate_degree}")
        if not 0 <= self.surrogate_refinements <= 10:
            raise NeurokInputError(f"surrogate_refinements must be between 0 and 10, got "
                                   f"{self.surrogate_refinements}")
        for push in self.pushes:
            push.validate()
        for pin in self.pins:
            pin.validate()
        return self


FIELDS = {f.name for f in dataclasses.fields(SimulationSettings)}


def _coerce(data: dict) -> dict:
    out = dict(data)
    if "gravity" in out:
        out["gravity"] = tuple(float(g) for g in out["gravity"])
    for name in ("simulation_points", "output_points", "seed", "surrogate_degree", "surrogate_refinements"):
        if name in out:
            out[name] = int(out[name])
    if out.get("coordinates") is not None:
        out["coordinates"] = int(out["coordinates"])
    for name in ("duration", "fps", "stiffness", "anchor_stiffness", "pin_stiffness", "damping", "mass", "barrier",
                 "contact_tolerance", "drag_stiffness", "drag_damping", "inertia_ratio", "step_size", "rtol", "atol",
                 "surrogate_radius", "joint_damping", "joint_friction", "restitution"):
        if name in out:
            out[name] = float(out[name])
    if "free_base" in out and isinstance(out["free_base"], str):
        out["free_base"] = out["free_base"].strip().lower() in ("1", "true", "yes", "on")
    if "pushes" in out:
        out["pushes"] = tuple(p if isinstance(p, PushSpec) else PushSpec(**p) for p in out["pushes"])
    if "pins" in out:
        out["pins"] = tuple(p if isinstance(p, PinBox) else PinBox(**p) for p in out["pins"])
    return out


def default_settings(path=None) -> SimulationSettings:
    """The settings of config/simulation.yaml (or of the YAML file `path`)."""
    data = load_yaml(path or config_path("simulation.yaml"))
    unknown = set(data) - FIELDS
    if unknown:
        raise NeurokInputError(f"unknown simulation settings {sorted(unknown)}; known: {sorted(FIELDS)}")
    missing = FIELDS - set(data) - {"pushes", "pins"}
    if missing:
        raise NeurokInputError(f"simulation settings file lacks {sorted(missing)}")
    try:
        return SimulationSettings(**_coerce(data)).validate()
    except (TypeError, ValueError) as exc:
        raise NeurokInputError(f"bad simulation settings: {exc}") from None


def settings_from(overrides: Optional[dict] = None, base: Optional[SimulationSettings] = None,
                  **more) -> SimulationSettings:
    """`base` (default: config/simulation.yaml) with the given fields replaced, validated.
    None values in `overrides` are ignored (unset command-line options)."""
    changes = {k: v for k, v in {**(overrides or {}), **more}.items() if v is not None}
    unknown = set(changes) - FIELDS
    if unknown:
        raise NeurokInputError(f"unknown simulation settings {sorted(unknown)}")
    try:
        changes = _coerce(changes)
    except (TypeError, ValueError) as exc:
        raise NeurokInputError(f"bad simulation settings: {exc}") from None
    return dataclasses.replace(base or default_settings(), **changes).validate()


def _number_rows(values: Sequence[Sequence[float]], width: int, option: str, layout: str) -> list:
    """Rows of `width` floats (a repeated command-line option); ActionError naming the option otherwise."""
    rows = [[float(v) for v in row] for row in values]
    for row in rows:
        if len(row) != width:
            raise ActionError(f"{option} needs {width} numbers {layout}, got {len(row)}")
    return rows


def pinned_by_boxes(settings: SimulationSettings, vertices: np.ndarray) -> list[np.ndarray]:
    """(n,) bool per pin box of the settings: the mesh vertices (n, 3) it holds; ActionError for a box
    that holds none (a pin must hold something, never silently nothing)."""
    held = []
    for i, box in enumerate(settings.pins):
        inside = box.contains(np.asarray(vertices, dtype=np.float64))
        if not inside.any():
            raise ActionError(f"pin box {i} {[float(v) for v in box.lower]} - {[float(v) for v in box.upper]} "
                              f"holds no vertex of the mesh")
        held.append(inside)
    return held


def pin_boxes(values: Sequence[Sequence[float]]) -> tuple:
    """PinBox tuple from rows X0 Y0 Z0 X1 Y1 Z1 (command line --pin-box)."""
    return tuple(PinBox(tuple(row[:3]), tuple(row[3:])).validate()
                 for row in _number_rows(values, 6, "--pin-box", "X0 Y0 Z0 X1 Y1 Z1"))


def push_specs(values: Sequence[Sequence[float]]) -> tuple:
    """PushSpec tuple from rows X Y Z FX FY FZ T0 T1 (command line --force)."""
    return tuple(PushSpec(tuple(row[:3]), tuple(row[3:6]), row[6], row[7]).validate()
                 for row in _number_rows(values, 8, "--force", "X Y Z FX FY FZ T0 T1"))
