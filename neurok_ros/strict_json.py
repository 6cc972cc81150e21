"""Strict JSON values (the CLI's --json lines, the eval records): a non-finite float (an undefined IoU,
a timing the node did not report) becomes null instead of Python's NaN token, which JSON parsers reject."""
from __future__ import annotations

import json
import math

import numpy as np


def finite_or_none(value):
    """value with every non-finite float, at any depth of dicts, lists and tuples, as None; numpy
    scalars as Python numbers."""
    if isinstance(value, dict):
        return {key: finite_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(item) for item in value]
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        value = value.item()
    return None if isinstance(value, float) and not math.isfinite(value) else value


def json_line(mapping: dict) -> str:
    """json.dumps of a mapping (nested dicts and lists allowed) with non-finite floats as null."""
    return json.dumps(finite_or_none(mapping), allow_nan=False)
