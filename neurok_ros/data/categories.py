"""Registry of dataset categories: name -> (kind, generate(seed, num_frames) -> Instance)."""
from __future__ import annotations

from typing import Callable

from neurok_ros.data.instance_format import Instance

Generator = Callable[[int, int], Instance]


def all_categories() -> dict[str, tuple[str, Generator]]:
    """Every category with its kind ("articulated", "elastic" or "cloth") and generator."""
    from neurok_ros.data.articulated import ARTICULATED_CATEGORIES
    from neurok_ros.data.deformable import CLOTH_CATEGORIES, ELASTIC_CATEGORIES

    registry = {}
    for kind, table in (("articulated", ARTICULATED_CATEGORIES), ("elastic", ELASTIC_CATEGORIES),
                        ("cloth", CLOTH_CATEGORIES)):
        for name, generate in table.items():
            registry[name] = (kind, generate)
    return registry
