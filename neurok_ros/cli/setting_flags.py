"""The simulation settings as command-line flags, generated from their declaration
(simulation/settings.py: Setting), one flag per setting: --name-with-dashes unless the Setting names
its own (--points, --step). Unset flags are None and leave config/simulation.yaml's value."""
from __future__ import annotations

import argparse


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """Add one flag per simulation setting to `parser` (its dest: the setting's name)."""
    from neurok_ros.simulation.settings import setting_specs

    group = parser.add_argument_group("simulation settings (defaults: config/simulation.yaml)")
    for name, kind, setting in setting_specs():
        flag = setting.flag or "--" + name.replace("_", "-")
        if kind == "vector3":
            group.add_argument(flag, dest=name, nargs=3, type=float, metavar=("X", "Y", "Z"), help=setting.help)
        elif kind == "bool":
            group.add_argument(flag, dest=name, action="store_true", default=None, help=setting.help)
        else:
            kwargs = {"choices": setting.choices} if setting.choices else {}
            group.add_argument(flag, dest=name, type={"double": float, "integer": int}.get(kind, str),
                               help=setting.help, **kwargs)


def setting_overrides(args: argparse.Namespace) -> dict:
    """{setting: value} of the flags that add_setting_flags added (None for the unset ones)."""
    from neurok_ros.simulation.settings import setting_specs

    return {name: getattr(args, name) for name, _, _ in setting_specs()}
