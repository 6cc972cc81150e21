"""Procedural articulated objects with exact per-part rigid motion (docs/architecture.md §5).

ARTICULATED_CATEGORIES maps a category name to `generate(seed, num_frames) -> Instance`; every
generator is deterministic in its seed (np.random.default_rng(seed)).
"""
from __future__ import annotations

from typing import Callable

from neurok_ros.data.articulated import (
    bottle,
    box_lid,
    cabinet,
    door,
    drawer,
    faucet,
    lamp,
    laptop,
    microwave,
    oven,
    pliers,
    refrigerator,
    scissors,
    window,
)
from neurok_ros.data.instance_format import Instance

ARTICULATED_CATEGORIES: dict[str, Callable[[int, int], Instance]] = {
    "laptop": laptop.generate,
    "cabinet": cabinet.generate,
    "door": door.generate,
    "drawer": drawer.generate,
    "box_lid": box_lid.generate,
    "scissors": scissors.generate,
    "pliers": pliers.generate,
    "lamp": lamp.generate,
    "faucet": faucet.generate,
    "bottle": bottle.generate,
    "refrigerator": refrigerator.generate,
    "microwave": microwave.generate,
    "oven": oven.generate,
    "window": window.generate,
}
