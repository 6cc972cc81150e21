"""Parameters of neurok_node: descriptors (type, range, description) here; default values in one
place each. The simulation parameters (SIMULATION_PARAMETERS) take the names, units and defaults of
config/simulation.yaml, the defaults of `neurok simulate` too; the node's own parameters (model,
inputs, outputs) take theirs from config/neurok.yaml (ROS 2 params-file format, section
`neurok_node: ros__parameters:`), which may also override simulation values. The same file serves
as `--ros-args --params-file config/neurok.yaml`.

Every parameter is re-read at the start of each prediction, so `ros2 param set` takes effect on the
next action; the read-only ones (model, device) only at start. The simulation settings the node does
not expose (rtol, atol, inertia_ratio, seed) come from config/simulation.yaml.

A params file's node key must match the node's fully qualified name: `neurok_node:` for the node at
the root namespace, `/**/neurok_node:` or `/**:` for any namespace.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, make_dataclass
from typing import Optional

from neurok_ros.config_files import config_path, load_yaml
from neurok_ros.errors import NeurokInputError
from neurok_ros.simulation.settings import DERIVATIVES, DYNAMICS_MAPS, METHODS, pin_boxes

NODE_NAME = "neurok_node"
PARAMS_FILE = "neurok.yaml"
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?|mps)$")


@dataclass(frozen=True)
class ParameterSpec:
    """kind: double, integer, string, bool or double_array; low/high: inclusive range (numbers)."""

    name: str
    kind: str
    description: str
    low: Optional[float] = None
    high: Optional[float] = None
    read_only: bool = False
    constraints: str = ""


def _one_of(choices) -> str:
    """("a", "b", "c") -> "a, b or c"."""
    return ", ".join(choices[:-1]) + " or " + choices[-1]


SIMULATION = "simulation"  # group of the parameters that mirror config/simulation.yaml
SPECS = (
    # model
    ParameterSpec("checkpoint", "string", "model checkpoint (.pt); empty: the shipped neurok_default.pt",
                  read_only=True),
    ParameterSpec("device", "string", "torch device for the model", read_only=True,
                  constraints="auto, cpu, cuda, cuda:N or mps"),
    ParameterSpec("threads", "integer", "torch CPU threads; 0 keeps torch's default", 0, 256, read_only=True),
    ParameterSpec("warmup", "bool", "encode a small mesh and simulate it once before reporting ready",
                  read_only=True),
    ParameterSpec("autostart", "bool", "configure (load the model) and activate (open the topics) at start; "
                  "false: stay unconfigured until the lifecycle services say so", read_only=True),
    # frames
    ParameterSpec("frame_id", "string", "frame assumed for inputs whose header.frame_id is empty"),
    # simulation: the same names, units and defaults as config/simulation.yaml (docs/physics.md)
    ParameterSpec("duration", "double", "simulated time span, s", 0.01, 600.0),
    ParameterSpec("fps", "double", "output frames per second; T = round(duration * fps) + 1", 0.1, 1000.0),
    ParameterSpec("gravity", "double_array", "gravitational acceleration (x, y, z), m/s^2, mesh frame",
                  constraints="3 finite numbers"),
    ParameterSpec("stiffness", "double", "strain energy k_s of an object without joints (zero for rigid "
                  "motions), 1/s^2", 0.0, 1.0e8),
    ParameterSpec("anchor_stiffness", "double", "spring k_a pulling every point toward the input pose, 1/s^2; "
                  "0: none", 0.0, 1.0e8),
    ParameterSpec("pin_boxes", "double_array", "boxes whose surface is held in place (a base on a table, a frame "
                  "in a wall): 6 numbers each, X0 Y0 Z0 X1 Y1 Z1, mesh frame, m; unset or empty: none",
                  constraints="a multiple of 6 finite numbers with X0 <= X1, Y0 <= Y1, Z0 <= Z1"),
    ParameterSpec("pin_stiffness", "double", "spring k_pin holding the pinned surface, 1/s^2 (per kg)", 0.0, 1.0e9),
    ParameterSpec("damping", "double", "mass-proportional damping c, 1/s", 0.0, 1.0e6),
    ParameterSpec("mass", "double", "total mass of the object, kg", 1.0e-9, 1.0e9),
    ParameterSpec("barrier", "double", "prior barrier k_p, J per unit z^2", 0.0, 1.0e9),
    ParameterSpec("contact_tolerance", "double",
                  "largest distance of a contact from the mesh surface, as a fraction of the bounding-box "
                  "diagonal", 1.0e-9, 10.0),
    ParameterSpec("drag_stiffness", "double", "spring pulling a dragged contact toward its path, N/m", 0.0, 1.0e9),
    ParameterSpec("drag_damping", "double", "damper on a dragged contact's velocity relative to its path, N s/m",
                  0.0, 1.0e9),
    ParameterSpec("simulation_points", "integer", "surface points that carry the mass", 4, 1_000_000),
    ParameterSpec("coordinates", "integer", "at most this many simulated latent directions; 0: all", 0, 1024),
    ParameterSpec("method", "string", "integrator: dp45 (lean adaptive Dormand-Prince) or a torchdiffeq method",
                  constraints=_one_of(METHODS)),
    ParameterSpec("step_size", "double", "rk4 (fixed-step) step, s", 1.0e-6, 10.0),
    ParameterSpec("derivatives", "string", "how the decoder map is differentiated", constraints=_one_of(DERIVATIVES)),
    ParameterSpec("dynamics_map", "string", "what the solver differentiates: a polynomial fitted to the decoder "
                  "(fast) or the decoder itself", constraints=_one_of(DYNAMICS_MAPS)),
    ParameterSpec("surrogate_degree", "integer", "degree of the polynomial map", 1, 8),
    ParameterSpec("surrogate_radius", "double", "radius of the polynomial's first samples, latent units",
                  1.0e-3, 1.0e3),
    ParameterSpec("surrogate_refinements", "integer", "refits of the polynomial along the solved trajectory", 0, 10),
    ParameterSpec("output_points", "integer", "meshes with more vertices are driven by this many decoded samples",
                  4, 10_000_000),
    ParameterSpec("free_base", "bool", "articulated objects: the root part floats as a free rigid body "
                  "(false: anchored to the world, the URDF convention)"),
    ParameterSpec("joint_damping", "double", "damping of every joint, N m s/rad or N s/m", 0.0, 1.0e9),
    ParameterSpec("joint_friction", "double", "Coulomb friction of every joint, N m or N", 0.0, 1.0e9),
    ParameterSpec("restitution", "double", "of the joint limits: 0 stops a part there, 1 bounces it back", 0.0, 1.0),
    ParameterSpec("articulation", "string", "auto: read each mesh's parts and joints (neurok articulate) and "
                  "simulate an object with joints in joint coordinates, its parts rigid; none: the learned "
                  "latent chart", constraints="auto or none"),
    # inputs
    ParameterSpec("max_vertices", "integer", "meshes with more vertices are decimated to this many", 4, 100_000_000),
    ParameterSpec("decimate", "bool", "decimate meshes over max_vertices (false: reject them)"),
    ParameterSpec("click_speed", "double", "initial speed of a push from ~/clicked_point, m/s", 0.0, 1000.0),
    ParameterSpec("cache_size", "integer", "mesh encodings kept (least recently used dropped); 0: none", 0, 1000),
    ParameterSpec("observation_partial", "bool", "~/observation clouds show one side of the object (one depth "
                  "camera): fit the one-sided Chamfer from the points; false: they cover the whole surface"),
    ParameterSpec("observation_points", "integer", "points of an ~/observation cloud the fit sees (a seeded subset)",
                  16, 100_000),
    ParameterSpec("observation_support_band", "double", "~/observation points within this many bounding-box "
                  "diagonals of the plane of the mesh's lowest z (the table it stands on) are left out; 0: none",
                  0.0, 0.5),
    ParameterSpec("observation_trim", "double", "fraction of an ~/observation cloud's object points farthest from the "
                  "fitted shape left out of the fit (a gripper in the view); a smaller moving part may go unseen",
                  0.0, 0.9),
    ParameterSpec("observation_rigid_pieces", "bool", "fit a mesh of several connected pieces (an assembly) to an "
                  "~/observation cloud as rigid pieces, each moved by its best rigid motion; false: as one surface"),
    # outputs
    ParameterSpec("playback_rate", "double", "RViz playback speed on ~/markers (1 = real time); 0: no playback",
                  0.0, 100.0),
    ParameterSpec("playback_loop", "bool", "repeat the playback until the next prediction"),
    ParameterSpec("diagnostics_period", "double", "seconds between periodic /diagnostics messages", 0.05, 3600.0),
)
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}
SIMULATION_PARAMETERS = ("duration", "fps", "gravity", "stiffness", "anchor_stiffness", "pin_stiffness", "damping",
                         "mass", "barrier", "contact_tolerance", "drag_stiffness", "drag_damping",
                         "simulation_points", "coordinates", "method", "step_size", "derivatives", "dynamics_map",
                         "surrogate_degree",
                         "surrogate_radius", "surrogate_refinements", "output_points", "free_base",
                         "joint_damping", "joint_friction", "restitution")
_CHOICES = {"method": METHODS, "derivatives": DERIVATIVES, "dynamics_map": DYNAMICS_MAPS,
            "articulation": ("auto", "none")}


def _simulation_overrides(self) -> dict:
    """{field: value} for neurok_ros.simulation.settings_from (coordinates 0 -> None: all)."""
    values = {name: getattr(self, name) for name in SIMULATION_PARAMETERS}
    values["gravity"] = tuple(values["gravity"])
    values["coordinates"] = values["coordinates"] or None
    flat = list(self.pin_boxes)
    values["pins"] = pin_boxes([flat[i:i + 6] for i in range(0, len(flat), 6)])
    return values


_PYTHON_TYPES = {"double": float, "integer": int, "string": str, "bool": bool, "double_array": tuple}
# The node's parameters read at one instant: one field per SPECS entry (meanings and units there).
NodeSettings = make_dataclass("NodeSettings", [(spec.name, _PYTHON_TYPES[spec.kind]) for spec in SPECS],
                              frozen=True, namespace={"simulation_overrides": _simulation_overrides})


def simulation_defaults() -> dict:
    """{name: value} of the simulation parameters from config/simulation.yaml, as ROS values
    (gravity a list, coordinates None -> 0)."""
    from neurok_ros.simulation.settings import default_settings

    settings = default_settings()
    values = {name: getattr(settings, name) for name in SIMULATION_PARAMETERS}
    values["gravity"] = [float(g) for g in values["gravity"]]
    values["coordinates"] = values["coordinates"] or 0
    values["pin_boxes"] = [float(v) for box in settings.pins for v in (*box.lower, *box.upper)]
    return values


def default_values(path=None) -> dict:
    """{name: value}: the simulation defaults of config/simulation.yaml, then the `neurok_node:
    ros__parameters:` section of config/neurok.yaml (or path) on top; NeurokInputError when a
    parameter is missing, unknown or invalid."""
    path = path or config_path(PARAMS_FILE)
    data = load_yaml(path)
    try:
        section = dict(data[NODE_NAME]["ros__parameters"])
    except (KeyError, TypeError):
        raise NeurokInputError(f"{path}: expected a '{NODE_NAME}: ros__parameters:' section") from None
    values = {**simulation_defaults(), **section}
    if values.get("coordinates") is None and "coordinates" in values:
        values["coordinates"] = 0
    missing = sorted(set(SPEC_BY_NAME) - set(values))
    unknown = sorted(set(values) - set(SPEC_BY_NAME))
    if missing or unknown:
        raise NeurokInputError(f"{path}: missing parameters {missing}, unknown parameters {unknown}")
    for name, value in values.items():
        problem = check_value(SPEC_BY_NAME[name], value)
        if problem:
            raise NeurokInputError(f"{path}: {problem}")
    return values


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_value(spec: ParameterSpec, value) -> Optional[str]:
    """None when `value` suits `spec`, else a one-line reason."""
    kind = spec.kind
    if kind == "double" and not _is_number(value):
        return f"parameter {spec.name} must be a number, got {value!r}"
    if kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        return f"parameter {spec.name} must be an integer, got {value!r}"
    if kind == "string" and not isinstance(value, str):
        return f"parameter {spec.name} must be a string, got {value!r}"
    if kind == "bool" and not isinstance(value, bool):
        return f"parameter {spec.name} must be true or false, got {value!r}"
    if kind in ("double", "integer"):
        if not math.isfinite(value):
            return f"parameter {spec.name} must be finite, got {value!r}"
        if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
            return f"parameter {spec.name} = {value!r} is outside [{spec.low:g}, {spec.high:g}]"
    if spec.name == "gravity":
        if (not isinstance(value, (list, tuple)) or len(value) != 3
                or not all(_is_number(v) and math.isfinite(v) for v in value)):
            return f"parameter gravity must be 3 finite numbers, got {value!r}"
    if spec.name == "pin_boxes":
        if (not isinstance(value, (list, tuple)) or len(value) % 6
                or not all(_is_number(v) and math.isfinite(v) for v in value)):
            return f"parameter pin_boxes must be a multiple of 6 finite numbers, got {value!r}"
        if any(value[i + 3 + a] < value[i + a] for i in range(0, len(value), 6) for a in range(3)):
            return f"parameter pin_boxes needs X0 <= X1, Y0 <= Y1, Z0 <= Z1 in every box, got {value!r}"
    if spec.name == "device" and not _DEVICE.match(value):
        return f"parameter device must be auto, cpu, cuda, cuda:N or mps, got {value!r}"
    if spec.name in _CHOICES and value not in _CHOICES[spec.name]:
        return f"parameter {spec.name} must be one of {_one_of(_CHOICES[spec.name])}, got {value!r}"
    return None


def descriptor(spec: ParameterSpec):
    """rcl_interfaces/ParameterDescriptor of a spec, with its range."""
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType

    types = {"double": ParameterType.PARAMETER_DOUBLE, "integer": ParameterType.PARAMETER_INTEGER,
             "string": ParameterType.PARAMETER_STRING, "bool": ParameterType.PARAMETER_BOOL,
             "double_array": ParameterType.PARAMETER_DOUBLE_ARRAY}
    d = ParameterDescriptor(name=spec.name, type=types[spec.kind], description=spec.description,
                            read_only=spec.read_only, additional_constraints=spec.constraints)
    if spec.kind == "double" and spec.low is not None:
        d.floating_point_range = [FloatingPointRange(from_value=float(spec.low), to_value=float(spec.high), step=0.0)]
    if spec.kind == "integer" and spec.low is not None:
        d.integer_range = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
    return d


def declare_parameters(node, defaults: Optional[dict] = None) -> None:
    """Declare every parameter on `node` with its descriptor and default (config/neurok.yaml unless
    `defaults` is given); overrides (--params-file, launch, parameter_overrides) apply on top. A
    value that breaks a constraint the descriptor cannot express (gravity, device) is refused."""
    from rcl_interfaces.msg import SetParametersResult

    defaults = default_values() if defaults is None else defaults

    def validate(parameters):
        for p in parameters:
            spec = SPEC_BY_NAME.get(p.name)
            if spec is not None:
                value = list(p.value or ()) if spec.kind == "double_array" else p.value
                problem = check_value(spec, value)
                if problem:
                    return SetParametersResult(successful=False, reason=problem)
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(validate)
    node.declare_parameters("", [(spec.name, _ros_value(spec, defaults[spec.name]), descriptor(spec))
                                 for spec in SPECS])


def _ros_value(spec: ParameterSpec, value):
    from rclpy.parameter import Parameter

    if spec.kind == "double":
        return float(value)
    if spec.kind == "double_array":  # an empty list would be declared as a byte array: declare the type
        return [float(v) for v in value] if len(value) else Parameter.Type.DOUBLE_ARRAY
    return value


def read_settings(node) -> NodeSettings:
    """The current parameter values as NodeSettings."""
    from rclpy.exceptions import ParameterUninitializedException

    values = {}
    for spec in SPECS:
        try:
            value = node.get_parameter(spec.name).value
        except ParameterUninitializedException:  # a double array declared without a value (pin_boxes)
            value = ()
        values[spec.name] = tuple(float(v) for v in value) if spec.kind == "double_array" else value
    return NodeSettings(**values)


def settings_fields() -> tuple:
    return tuple(f.name for f in fields(NodeSettings))
