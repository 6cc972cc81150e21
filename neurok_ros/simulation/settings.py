"""SimulationSettings: everything predict_motion needs besides the instance and the contacts.

Defaults live in config/simulation.yaml only: `default_settings()` reads them, and
`settings_from(overrides)` replaces some. Units: seconds, metres (mesh frame), kilograms, newtons.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
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
class Setting:
    """What a simulation setting is, declared once beside its field: unit, description, inclusive
    range (low, high; `positive`: low excluded), choices, and its command-line flag ("" for
    --name-with-dashes). config/simulation.yaml holds the defaults; this metadata generates the
    settings' validation, the node's parameter specs (ros/node_parameters.py) and the flags of
    `neurok simulate` (cli/setting_flags.py)."""

    unit: str
    description: str
    low: Optional[float] = None
    high: Optional[float] = None
    positive: bool = False
    choices: tuple = ()
    flag: str = ""

    @property
    def help(self) -> str:
        """One line for --help and the node's parameter description."""
        return self.description + (f", {self.unit}" if self.unit else "")


def setting(unit: str, description: str, low: Optional[float] = None, high: Optional[float] = None,
            **more):
    """A dataclass field carrying its Setting (no default: defaults live in config/simulation.yaml)."""
    return field(metadata={"setting": Setting(unit, description, low, high, **more)})


# Kinds of setting, from the field's annotation: what the node declares and the CLI parses.
KINDS = {"float": "double", "int": "integer", "Optional[int]": "integer", "str": "string", "bool": "bool",
         "tuple": "vector3"}


@dataclass(frozen=True)
class SimulationSettings:
    """Everything predict_motion needs besides the instance and the contacts: one field per setting
    (unit, range and meaning in its Setting), then pushes (PushSpec tuple) and pins (PinBox tuple).
    Objects with joints use the joints chart's settings (free_base, joint_damping, joint_friction,
    restitution); the others the latent chart's (stiffness, coordinates, the surrogate's, ...)."""

    duration: float = setting("s", "simulated time span", 0.0, 3600.0, positive=True)
    fps: float = setting("1/s", "output frames per second; T = round(duration * fps) + 1", 0.0, 1000.0,
                         positive=True)
    gravity: tuple = setting("m/s^2", "gravitational acceleration (x, y, z), mesh frame")
    stiffness: float = setting("1/s^2", "strain energy k_s of an object without joints (zero for rigid motions)",
                               0.0, 1.0e8)
    anchor_stiffness: float = setting("1/s^2", "spring k_a pulling every point back toward the input pose; 0: none",
                                      0.0, 1.0e8)
    pin_stiffness: float = setting("1/s^2", "spring k_pin holding the surface inside the pin boxes (per kg)",
                                   0.0, 1.0e9)
    damping: float = setting("1/s", "mass-proportional damping c", 0.0, 1.0e6)
    mass: float = setting("kg", "total mass of the object", 0.0, 1.0e9, positive=True)
    barrier: float = setting("J per unit z^2", "prior barrier k_p", 0.0, 1.0e9)
    contact_tolerance: float = setting("", "largest distance of a contact or push point from the surface, as a "
                                       "fraction of the bounding-box diagonal", 0.0, 10.0, positive=True)
    drag_stiffness: float = setting("N/m", "spring pulling a dragged contact toward its path", 0.0, 1.0e9)
    drag_damping: float = setting("N s/m", "damper on a dragged contact's velocity relative to its path",
                                  0.0, 1.0e9)
    simulation_points: int = setting("", "surface points that carry the mass", 4, 1_000_000, flag="--points")
    coordinates: Optional[int] = setting("", "at most this many simulated latent directions (0 or null: all)",
                                         0, 1024)
    inertia_ratio: float = setting("", "keep the latent directions with at least this fraction of the largest "
                                   "inertia", 0.0, 1.0)
    method: str = setting("", "integrator: dp45 (lean adaptive Dormand-Prince) or a torchdiffeq method",
                          choices=METHODS)
    step_size: float = setting("s", "fixed-step (rk4) step", 0.0, 10.0, positive=True, flag="--step")
    rtol: float = setting("", "relative tolerance of the adaptive integrators", 0.0, 1.0, positive=True)
    atol: float = setting("", "absolute tolerance of the adaptive integrators", 0.0, 1.0, positive=True)
    derivatives: str = setting("", "how the decoder map is differentiated", choices=DERIVATIVES)
    dynamics_map: str = setting("", "what the solver differentiates: a polynomial fitted to the decoder (fast) "
                                "or the decoder itself", choices=DYNAMICS_MAPS)
    surrogate_degree: int = setting("", "degree of the polynomial map", 1, 8)
    surrogate_radius: float = setting("latent units", "radius of the polynomial's first samples", 0.0, 1.0e3,
                                      positive=True)
    surrogate_refinements: int = setting("", "refits of the polynomial along the solved trajectory", 0, 10)
    output_points: int = setting("", "meshes with more vertices are driven by this many decoded samples",
                                 4, 10_000_000)
    seed: int = setting("", "seed of the surface sampling", 0, 2 ** 31 - 1)
    free_base: bool = setting("", "objects with joints: the root part floats as a free rigid body (default: "
                              "anchored to the world, the URDF convention)")
    joint_damping: float = setting("N m s/rad or N s/m", "damping of every joint", 0.0, 1.0e9)
    joint_friction: float = setting("N m or N", "Coulomb friction of every joint", 0.0, 1.0e9)
    restitution: float = setting("", "of the joint limits: 0 stops a part there, 1 bounces it back", 0.0, 1.0)
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
        for name, kind, spec in setting_specs():
            problem = setting_problem(name, kind, spec, getattr(self, name))
            if problem:
                raise (ActionError if name == "gravity" else NeurokInputError)(problem)
        if self.num_frames > 100_000:
            raise NeurokInputError(f"duration * fps = {self.num_frames - 1} frames is too many (max 100000)")
        for push in self.pushes:
            push.validate()
        for pin in self.pins:
            pin.validate()
        return self


def setting_specs() -> tuple:
    """(name, kind, Setting) of every setting, in declaration order; kind: double, integer, string,
    bool or vector3."""
    return tuple((f.name, KINDS[str(f.type)], f.metadata["setting"]) for f in dataclasses.fields(SimulationSettings)
                 if "setting" in f.metadata)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def setting_problem(name: str, kind: str, spec: Setting, value) -> Optional[str]:
    """None when `value` suits the setting, else a one-line reason naming it."""
    if name == "coordinates" and value is None:
        return None
    if kind == "vector3":
        if (not isinstance(value, (list, tuple)) or len(value) != 3
                or not all(_is_number(v) and math.isfinite(v) for v in value)):
            shown = list(value) if isinstance(value, (list, tuple)) else value
            return f"{name} must be 3 finite numbers ({spec.unit}), got {shown!r}"
        return None
    if kind == "bool":
        return None if isinstance(value, bool) else f"{name} must be true or false, got {value!r}"
    if kind == "string":
        if spec.choices and value not in spec.choices:
            return f"{name} must be one of {', '.join(spec.choices)}, got {value!r}"
        return None
    if kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        return f"{name} must be an integer, got {value!r}"
    if not _is_number(value) or not math.isfinite(value):
        return f"{name} must be a {'positive' if spec.positive else 'finite'} number, got {value!r}"
    if spec.positive and not value > 0:
        return f"{name} must be a positive number, got {value!r}"
    if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
        return f"{name} = {value!r} is outside [{spec.low:g}, {spec.high:g}]"
    return None


FIELDS = {f.name for f in dataclasses.fields(SimulationSettings)}


_CASTS = {"double": float, "integer": int, "string": str}


def _coerce(data: dict) -> dict:
    """Values from YAML or the command line as their settings' types (numbers as float or int,
    gravity a tuple, booleans from strings, pushes and pins as their dataclasses)."""
    out = dict(data)
    for name, kind, _ in setting_specs():
        if name not in out or out[name] is None:
            continue
        if kind == "vector3":
            out[name] = tuple(float(g) for g in out[name])
        elif kind == "bool" and isinstance(out[name], str):
            out[name] = out[name].strip().lower() in ("1", "true", "yes", "on")
        elif kind in _CASTS and not isinstance(out[name], bool):
            out[name] = _CASTS[kind](out[name])
    if out.get("coordinates") == 0:
        out["coordinates"] = None  # all
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
