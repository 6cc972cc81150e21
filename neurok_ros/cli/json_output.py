"""One JSON line for the CLI's --json output: strict JSON, so a non-finite float (an undefined IoU)
becomes null instead of Python's NaN token, which JSON parsers reject."""
from __future__ import annotations

import json
import math


def finite_or_none(value):
    """value, or None where it is a non-finite float."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def json_line(mapping: dict) -> str:
    """json.dumps of a flat mapping with non-finite floats as null."""
    return json.dumps({key: finite_or_none(value) for key, value in mapping.items()}, allow_nan=False)
