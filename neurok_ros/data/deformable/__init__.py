"""Elastic bodies and cloth simulated with MuJoCo 4 flexes (docs/architecture.md §5).

ELASTIC_CATEGORIES (kind "elastic", dim=3 soft solids) and CLOTH_CATEGORIES (kind "cloth", dim=2
sheets) map a category name to generate(seed, num_frames) -> Instance, deterministic in the seed.
"""
from __future__ import annotations

from typing import Callable

from neurok_ros.data.deformable import cloth_corner_lift, cloth_hanging, cloth_wind, elastic_beam, soft_blob, soft_stem
from neurok_ros.data.instance_format import Instance

ELASTIC_CATEGORIES: dict[str, Callable[[int, int], Instance]] = {
    elastic_beam.CATEGORY: elastic_beam.generate,
    soft_blob.CATEGORY: soft_blob.generate,
    soft_stem.CATEGORY: soft_stem.generate,
}

CLOTH_CATEGORIES: dict[str, Callable[[int, int], Instance]] = {
    cloth_hanging.CATEGORY: cloth_hanging.generate,
    cloth_corner_lift.CATEGORY: cloth_corner_lift.generate,
    cloth_wind.CATEGORY: cloth_wind.generate,
}
