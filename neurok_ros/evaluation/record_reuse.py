"""Records of earlier `neurok eval` runs taken instead of fitted again (`--reuse-records`).

A 200-pair table takes about an hour per fitted row on two cores. Adding rows to a finished table,
or going on after an interruption, should not fit again what was already fitted. An earlier run's
records are reusable when its protocol (PROTOCOL_FIELDS, which its --json file stores resolved, as
"config": protocol_of) equals this run's, and each reused row is
spot-checked: its first reused pair is fitted again and must reproduce the stored metrics
(SPOT_TOLERANCE). A different checkpoint, dataset or fitting code fails that check.

Records are keyed by (row key, instance file, pose a, pose b); failed records are never reused.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, is_dataclass
from pathlib import Path

from neurok_ros.errors import NeurokInputError

# EvalConfig fields that decide a record's numbers, besides the row's checkpoint and the code.
PROTOCOL_FIELDS = ("split", "split_file", "seed", "metric_samples", "target_samples", "ik", "fits", "pca",
                   "random_heading", "partial_view")
# A spot-checked record reproduces its stored one when every metric is within this (absolute, in
# SOURCE's normalised frame; IoU is a fraction) of it.
SPOT_TOLERANCE = {"chamfer_l1": 1e-6, "chamfer_l2": 1e-8, "iou": 1e-4}


def record_key(record: dict) -> tuple[str, str, int, int]:
    return record["method"], record["file"], int(record["pose_a"]), int(record["pose_b"])


def protocol_of(config) -> dict:
    """An EvalConfig's PROTOCOL_FIELDS as JSON values: IKConfig and PCAConfig as dicts of their fields,
    paths as strings."""
    values = {}
    for name in PROTOCOL_FIELDS:
        value = getattr(config, name)
        values[name] = asdict(value) if is_dataclass(value) else str(value) if isinstance(value, Path) else value
    return json.loads(json.dumps(values))


def protocol_differences(earlier: dict, current: dict) -> list[str]:
    """Names of the PROTOCOL_FIELDS in which two protocols (protocol_of) differ."""
    return [name for name in PROTOCOL_FIELDS if earlier.get(name) != current.get(name)]


def metric_gap(stored: dict, fresh: dict) -> dict[str, float]:
    """{metric: |stored - fresh|} over SPOT_TOLERANCE's metrics; inf where one of them is undefined
    and the other is not, 0 where both are undefined."""
    gaps = {}
    for name in SPOT_TOLERANCE:
        a, b = stored.get(name), fresh.get(name)
        if a is None or b is None:
            gaps[name] = 0.0 if a is None and b is None else math.inf
        else:
            gaps[name] = abs(float(a) - float(b))
    return gaps


def reproduces(stored: dict, fresh: dict) -> bool:
    gaps = metric_gap(stored, fresh)
    return all(gaps[name] <= tolerance for name, tolerance in SPOT_TOLERANCE.items())


def index_records(sources: list[tuple[str, list[dict]]]) -> dict[tuple, dict]:
    """{record_key: record} over every source's scored records. sources: (name, records) pairs. A key
    given by two sources must carry the same metrics in both (SPOT_TOLERANCE), else NeurokInputError."""
    index: dict[tuple, dict] = {}
    origin: dict[tuple, str] = {}
    for name, records in sources:
        for record in records:
            try:
                if record.get("error"):
                    continue
                key = record_key(record)
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                raise NeurokInputError(f"--reuse-records: {name} holds a record that is not an eval record "
                                       f"({exc!r})") from exc
            if key in index and not reproduces(index[key], record):
                raise NeurokInputError(f"--reuse-records: {origin[key]} and {name} disagree on row {key[0]}, "
                                       f"pair {key[1]} poses {key[2]}->{key[3]}")
            index.setdefault(key, record)
            origin.setdefault(key, name)
    return index
