"""Parameters of neurok_node: descriptors (type, range, description) and default values, each in one
place. The simulation parameters (SIMULATION_PARAMETERS) are generated from the settings' own
declaration (simulation/settings.py: names, units, ranges, descriptions) and take their defaults
from config/simulation.yaml, as `neurok simulate` does; the node's own parameters (model, inputs,
outputs) are declared here and take their defaults from config/neurok.yaml (ROS 2 params-file
format, section `neurok_node: ros__parameters:`), which may also override simulation values. The
same file serves as `--ros-args --params-file config/neurok.yaml`.

Every parameter is re-read at the start of each prediction, so `ros2 param set` takes effect on the
next action; the read-only ones (model, device) only at start.

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
from neurok_ros.simulation.settings import pin_boxes, setting_problem, setting_specs

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
    # simulation: generated from simulation/settings.py (SIMULATION_SPECS below), then:
    ParameterSpec("pin_boxes", "double_array", "boxes whose surface is held in place (a base on a table, a frame "
                  "in a wall): 6 numbers each, X0 Y0 Z0 X1 Y1 Z1, mesh frame, m; unset or empty: none",
                  constraints="a multiple of 6 finite numbers with X0 <= X1, Y0 <= Y1, Z0 <= Z1"),
    ParameterSpec("articulation", "string", "auto: read each mesh's parts and joints (neurok articulate) and "
                  "simulate an object with joints in joint coordinates, its parts rigid; none: the learned "
                  "latent chart", constraints="auto or none"),
    # inputs
    ParameterSpec("max_vertices", "integer", "meshes with more vertices are decimated to this many", 4, 100_000_000),
    ParameterSpec("decimate", "bool", "decimate meshes over max_vertices (false: reject them)"),
    ParameterSpec("click_speed", "double", "initial speed of a push from ~/clicked_point, m/s", 0.0, 1000.0),
    ParameterSpec("cache_size", "integer", "mesh encodings kept (least recently used dropped); 0: none", 0, 1000),
    ParameterSpec("observation_reliable", "bool", "subscribe to ~/observation RELIABLE; false: BEST_EFFORT, the "
                  "sensor-data QoS, which also hears reliable publishers (read when the topics open)"),
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
    ParameterSpec("observation_joints", "bool", "fit an ~/observation's joint values first (the mesh's parts and "
                  "joints, each part rigid), then the learned deformation from that pose, and keep the one nearer "
                  "the cloud; false: the learned fit alone"),
    # outputs
    ParameterSpec("playback_rate", "double", "RViz playback speed on ~/markers (1 = real time); 0: no playback",
                  0.0, 100.0),
    ParameterSpec("playback_loop", "bool", "repeat the playback until the next prediction"),
    ParameterSpec("diagnostics_period", "double", "seconds between periodic /diagnostics messages", 0.05, 3600.0),
)
SETTINGS = {name: (kind, setting) for name, kind, setting in setting_specs()}
SIMULATION_PARAMETERS = tuple(SETTINGS)


def _simulation_spec(name: str, kind: str, setting) -> ParameterSpec:
    """The node parameter of a simulation setting (its Setting: simulation/settings.py)."""
    if kind == "vector3":
        return ParameterSpec(name, "double_array", setting.help, constraints="3 finite numbers")
    ranged = setting.low is not None and setting.high is not None
    constraints = (_one_of(setting.choices) if setting.choices else "positive" if setting.positive else "")
    return ParameterSpec(name, kind, setting.help, setting.low if ranged else None, setting.high if ranged else None,
                         constraints=constraints)


SPECS = SPECS + tuple(_simulation_spec(name, kind, setting) for name, (kind, setting) in SETTINGS.items())
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}
_CHOICES = {"articulation": ("auto", "none")}


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
    if spec.name in SETTINGS:
        kind, setting = SETTINGS[spec.name]
        problem = setting_problem(spec.name, kind, setting, list(value) if isinstance(value, tuple) else value)
        return None if problem is None else f"parameter {problem}"
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
