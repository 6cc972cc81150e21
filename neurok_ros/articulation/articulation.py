"""The articulation of one object: its parts (a label per input vertex) and the joints between them.

Everything is in the input mesh's own frame and units:
  labels    (n,) int64, the part of each input vertex; 0 is the root (base) part
  Joint     type "revolute" | "prismatic"; axis (3,) unit vector; origin (3,) a point on the axis;
            lower / upper in rad (revolute) or mesh units (prismatic), relative to the input pose = 0;
            parent / child: part labels; confidence in [0, 1]
  kind      "articulated" (at least one joint) | "soft" | "cloth" (no joints)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

JOINT_TYPES = ("revolute", "prismatic")
KINDS = ("articulated", "soft", "cloth")


@dataclass
class Joint:
    """One joint; see the module docstring for frames and units."""

    name: str
    type: str
    axis: np.ndarray
    origin: np.ndarray
    lower: float
    upper: float
    parent: int
    child: int
    confidence: float

    def __post_init__(self):
        if self.type not in JOINT_TYPES:
            raise ValueError(f"joint {self.name!r}: type {self.type!r} is not one of {JOINT_TYPES}")
        axis = np.asarray(self.axis, dtype=np.float64).reshape(3)
        norm = float(np.linalg.norm(axis))
        if not np.isfinite(norm) or norm == 0.0:
            raise ValueError(f"joint {self.name!r}: axis {axis.tolist()} is not a direction")
        self.axis = axis / norm
        self.origin = np.asarray(self.origin, dtype=np.float64).reshape(3)
        self.lower, self.upper = float(min(self.lower, self.upper)), float(max(self.lower, self.upper))
        self.confidence = float(np.clip(self.confidence, 0.0, 1.0))

    def to_dict(self) -> dict:
        return {"name": self.name, "type": self.type, "axis": [float(a) for a in self.axis],
                "origin": [float(o) for o in self.origin], "lower": self.lower, "upper": self.upper,
                "parent": int(self.parent), "child": int(self.child), "confidence": self.confidence}

    @classmethod
    def from_dict(cls, data: dict) -> "Joint":
        return cls(str(data["name"]), str(data["type"]), data["axis"], data["origin"], float(data["lower"]),
                   float(data["upper"]), int(data["parent"]), int(data["child"]), float(data["confidence"]))


@dataclass
class Articulation:
    """labels (n,) int64 per input vertex (0 = root); joints, parents before children; kind;
    part_names: one name per part label 0..P-1; seconds: how long the readout took."""

    labels: np.ndarray
    joints: list[Joint] = field(default_factory=list)
    kind: str = "articulated"
    part_names: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def __post_init__(self):
        self.labels = np.asarray(self.labels, dtype=np.int64).reshape(-1)
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {KINDS}")
        if len(self.labels) and self.labels.min() < 0:
            raise ValueError("part labels must be >= 0")
        if not self.part_names:
            self.part_names = ["base"] + [f"part_{p}" for p in range(1, self.num_parts)]

    @property
    def num_parts(self) -> int:
        return int(self.labels.max()) + 1 if len(self.labels) else 0

    def subtree(self, part: int) -> np.ndarray:
        """(n,) bool: the vertices of `part` and of every part below it."""
        parts, frontier = {part}, [part]
        while frontier:
            frontier = [j.child for j in self.joints if j.parent in frontier and j.child not in parts]
            parts.update(frontier)
        return np.isin(self.labels, sorted(parts))

    def joint_of_child(self, part: int) -> Joint | None:
        """The joint whose child is `part`, or None (the root)."""
        return next((j for j in self.joints if j.child == part), None)

    def to_dict(self) -> dict:
        """The JSON object of `neurok articulate --json`."""
        counts = np.bincount(self.labels, minlength=self.num_parts)
        return {"parts": [{"label": p, "vertices": int(counts[p]), "name": self.part_names[p]}
                          for p in range(self.num_parts)],
                "joints": [j.to_dict() for j in self.joints], "kind": self.kind,
                "seconds": round(float(self.seconds), 3)}

    def save(self, path) -> None:
        """Write the JSON object of to_dict() with the per-vertex `labels` added (`neurok articulate
        --out`), for `neurok simulate --articulation` to read back, edited or not."""
        import json

        with open(path, "w") as stream:
            json.dump({**self.to_dict(), "labels": self.labels.tolist()}, stream)

    @classmethod
    def load(cls, path, num_vertices: int) -> "Articulation":
        """The articulation saved at `path` for a mesh of num_vertices; NeurokInputError naming what is wrong."""
        import json

        from neurok_ros.errors import NeurokInputError

        try:
            with open(path) as stream:
                data = json.load(stream)
            labels = np.asarray(data["labels"], dtype=np.int64)
            articulation = cls.from_dict(data, labels)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise NeurokInputError(f"cannot read the articulation {path}: {exc}") from None
        if len(labels) != num_vertices:
            raise NeurokInputError(f"the articulation {path} labels {len(labels)} vertices, the mesh has "
                                   f"{num_vertices}")
        for joint in articulation.joints:
            if not (0 <= joint.parent < articulation.num_parts and 0 < joint.child < articulation.num_parts):
                raise NeurokInputError(f"the articulation {path}: joint {joint.name!r} joins parts {joint.parent} and "
                                       f"{joint.child}, which the labels do not have")
        return articulation

    @classmethod
    def from_dict(cls, data: dict, labels: np.ndarray) -> "Articulation":
        return cls(labels, [Joint.from_dict(j) for j in data.get("joints", [])], str(data["kind"]),
                   [p["name"] for p in sorted(data.get("parts", []), key=lambda p: p["label"])],
                   float(data.get("seconds", 0.0)))


def chosen_articulation(choice: str, num_vertices: int, read: Callable[[], Articulation]) -> Articulation | None:
    """The articulation a `none | auto | FILE` choice names (the --articulation option): None, read()
    (the mesh's readout), or the readout saved at FILE for a mesh of num_vertices (Articulation.load)."""
    if choice == "none":
        return None
    return read() if choice == "auto" else Articulation.load(choice, num_vertices)
