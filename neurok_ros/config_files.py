"""Locate and read the YAML files under config/ (the one place where defaults live).

Search order: the source checkout (editable install, tests), then the share folder of the prefix
this package is installed in (a colcon install space: <prefix>/lib/pythonX.Y/site-packages/neurok_ros
-> <prefix>/share/neurok_ros/config), then that of the running Python (a pip install with
data_files).
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

from neurok_ros.errors import NeurokInputError

_HERE = Path(__file__).resolve()
_SOURCE_CONFIG = _HERE.parents[1] / "config"
_INSTALL_PREFIX = _HERE.parents[4] if len(_HERE.parents) > 4 else _HERE.parents[-1]


def config_path(name: str) -> Path:
    """Path of config/<name>, e.g. "dataset.yaml" or "model/default.yaml"."""
    candidates = [_SOURCE_CONFIG / name] + [prefix / "share" / "neurok_ros" / "config" / name
                                            for prefix in (_INSTALL_PREFIX, Path(sys.prefix))]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise NeurokInputError(f"config file {name!r} not found in {[str(c.parent) for c in candidates]}")


def load_yaml(path: str | Path) -> dict:
    """Read a YAML mapping; a missing file or bad YAML is a one-line NeurokInputError."""
    path = Path(path)
    if not path.is_file():
        raise NeurokInputError(f"no such config file: {path}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise NeurokInputError(f"{path}: invalid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise NeurokInputError(f"{path}: expected a mapping at the top level")
    return data
