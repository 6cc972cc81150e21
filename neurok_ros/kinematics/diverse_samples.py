"""A contact sheet's draws: `count` of `pool` prior draws, as different from each other as possible.

Draws from the prior repeat what the data repeat: the dataset's laptops spend 3 of their 17 poses
closed and 6 fully open, so 8 random draws often show two lids at the same angle. To show the range
of the prior, `pool` draws are decoded on `points` surface samples and `count` of them are kept by
greedy farthest-point selection (start: the first draw; then, each time, the draw whose nearest kept
draw is farthest, distance = RMS point distance). Validity is not selected for: a bent or detached
draw is as likely to be kept as a valid one.
"""
from __future__ import annotations

import torch


def farthest_point_indices(features: torch.Tensor, count: int) -> list[int]:
    """Greedy farthest-point selection of count rows of features (N, D), starting with row 0."""
    count = min(int(count), len(features))
    chosen = [0]
    nearest = torch.cdist(features[:1], features)[0]
    while len(chosen) < count:
        index = int(torch.argmax(nearest))
        chosen.append(index)
        nearest = torch.minimum(nearest, torch.cdist(features[index:index + 1], features)[0])
    return chosen


def diverse_latents(instance, count: int, pool: int, seed: int = 0, temperature: float = 1.0,
                    points: int = 512) -> torch.Tensor:
    """(count, k) latents: count of pool prior draws (instance.sample_latents) by farthest-point
    selection of their decoded shapes on `points` surface samples; pool <= count: the first count
    draws as drawn."""
    latents = instance.sample_latents(max(count, pool), seed, temperature)
    if pool <= count:
        return latents[:count]
    _, probe = instance.surface_samples(points, seed)
    with torch.no_grad():
        shapes = instance.positions(latents, instance.query_cache(probe))
    return latents[farthest_point_indices(shapes.flatten(1) / points ** 0.5, count)]
