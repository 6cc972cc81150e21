"""The fitting options of `neurok ik`, `neurok fit` and `neurok eval`, built from IKConfig's fields.

Every IKConfig field whose metadata names a "flag" (kinematics/ik_config.py) is one option, under that
name in every command, with its help and default from the field. Older spellings stay accepted and
unlisted: the field's "aliases" (`--ik-keep-starts` for `--keep-starts`), and `--ik-steps Q Z` for
`--q-steps Q --z-steps Z`. An option not given leaves the command's own IKConfig as it is.
"""
from __future__ import annotations

import argparse
from dataclasses import Field, fields, replace

from neurok_ros.errors import NeurokInputError
from neurok_ros.kinematics.ik_config import IKConfig, value_problem

STEPS_ALIAS = "--ik-steps"  # Q Z: the q and z steps in one option


def exposed_fields() -> list[Field]:
    """IKConfig's fields with a flag, in field order."""
    return [f for f in fields(IKConfig) if "flag" in f.metadata]


def option_dest(name: str) -> str:
    """The parsed-arguments attribute of IKConfig field `name`."""
    return f"ik_{name}"


def on_off(text: str) -> bool:
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"expected on or off, got {text!r}")
    return text == "on"


class StepsAlias(argparse.Action):
    """`--ik-steps Q Z`: sets the q and the z steps."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, option_dest("q_steps"), values[0])
        setattr(namespace, option_dest("z_steps"), values[1])


def option_arguments(f: Field) -> dict:
    """add_argument's keywords for field f: its help with the default, its type and metavar."""
    text = f.metadata.get("flag_help", f.metadata["help"]).format(**{g.name: g.default for g in fields(IKConfig)})
    if isinstance(f.default, bool):
        if f.metadata["flag"].startswith("--no-"):
            return {"action": "store_const", "const": False, "help": text}
        return {"type": on_off, "metavar": "{on,off}", "help": f"{text} (default: {'on' if f.default else 'off'})"}
    return {"type": type(f.default), "metavar": f.metadata.get("metavar"), "help": f"{text} (default: {f.default:g})"}


def add_fit_options(parser: argparse.ArgumentParser, joints: bool = False) -> None:
    """Add one option per exposed IKConfig field (default None: not given), and the hidden aliases;
    joints: also --hold-joint-limits (IKConfig.hold_joint_limits), for the commands that fit through
    an articulation's joints."""
    group = parser.add_argument_group("fitting options (IKConfig)")
    if joints:
        group.add_argument("--hold-joint-limits", action="store_true",
                           help=IKConfig.__dataclass_fields__["hold_joint_limits"].metadata["help"])
    for f in exposed_fields():
        keywords = option_arguments(f)
        group.add_argument(f.metadata["flag"], dest=option_dest(f.name), default=None, **keywords)
        for alias in f.metadata.get("aliases", ()):
            group.add_argument(alias, dest=option_dest(f.name), default=None, **{**keywords, "help": argparse.SUPPRESS})
    group.add_argument(STEPS_ALIAS, nargs=2, type=int, action=StepsAlias, default=argparse.SUPPRESS,
                       help=argparse.SUPPRESS)


def fit_config(args, base: IKConfig) -> IKConfig:
    """base with the options given in args (parsed by a parser with add_fit_options). A value IKConfig
    refuses raises NeurokInputError, one line naming the option. Without rigid pieces the rigidity
    weight means nothing: it is 0 then, as stored by runs from before the pieces."""
    changes = {}
    for f in exposed_fields():
        value = getattr(args, option_dest(f.name), None)
        if value is None:
            continue
        problem = value_problem(f.name, value)
        if problem is not None:
            raise NeurokInputError(f"{f.metadata['flag']} {problem}")
        changes[f.name] = value
    if changes.get("rigid_pieces") is False:
        changes["rigidity_weight"] = 0.0
    return replace(base, **changes)


def fit_option_words(args) -> list[str]:
    """The options given in args as command-line words, each under its one name (field order)."""
    words = []
    for f in exposed_fields():
        value = getattr(args, option_dest(f.name), None)
        if value is None:
            continue
        flag = f.metadata["flag"]
        if isinstance(value, bool):
            words += [flag] if flag.startswith("--no-") else [flag, "on" if value else "off"]
        else:
            words += [flag, repr(value) if isinstance(value, float) else str(value)]
    return words
