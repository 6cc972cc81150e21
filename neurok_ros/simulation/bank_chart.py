"""Simulation coordinates from the posterior bank: a square-root chart through real motions.

The decoder is flat at z_rest (docs/physics.md, section 5): along the latent offset d of a real
motion, the surface moves like t^2 at z_rest + t d, so a linear chart z_rest + A q has J = dx/dq ~ 0
at q = 0 and no force (gravity included) can start the motion. Measured along bank offsets, the
motion is close to x_0 + s a at z_rest + sqrt(s) d: linear in s, with a finite, non-zero rate.

The chart keeps `count` modes. For each of the instance's bank offsets d_j (instance.motion_offsets),
v_j = x(z_rest + sqrt(PROBE) d_j) - x_0 is the shape change it starts with (mass-weighted, at the
simulation points). The modes are the leading right singular vectors u_i of the stacked v_j (those
with at least MIN_SINGULAR of the largest singular value: opening and closing one hinge give two
nearly opposite v_j, which are one mode, not two); mode i opens along the offset whose v_j is most
aligned with +u_i and closes along the one most aligned with -u_i, that latent step scaled so that
both sides start at the same speed (one slope through s = 0). When no offset points within 60
degrees of -u_i, the mode does not close: the shape stays at rest for q_i < 0, a joint limit
(-d_open would not do: the decoder is flat at z_rest, so to first order -d_open repeats the motion
of +d_open). Then

    z(q) = z_rest + sum_i sqrt(max(q_i, 0)) d_open_i + sqrt(max(-q_i, 0)) d_close_i,

so q = 0 is the input pose and q_i = +-1 is a whole bank motion. The map is not smooth at q_i = 0
(x ~ s + s^1.5); the polynomial surrogate (dynamics_map: polynomial) that the solver differentiates
is. No part labels are used: the modes come from the motions of the nearest training shapes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

PROBE = 0.1  # chart coordinate at which each offset's starting shape change is measured
MIN_ALIGNMENT = 0.5  # cosine below which no offset counts as closing a mode
MIN_SINGULAR = 0.1  # modes whose singular value is under this fraction of the largest are dropped


@dataclass
class BankChart:
    """rest (k,): z_rest; opening, closing (m, k): each mode's latent steps (closing zero for a mode
    that does not close); alignment (m, 2): the cosine of the chosen offsets' shape changes with +u_i
    and -u_i."""

    rest: torch.Tensor
    opening: torch.Tensor
    closing: torch.Tensor
    alignment: torch.Tensor

    @property
    def num_modes(self) -> int:
        return int(self.opening.shape[0])

    def latents(self, q: torch.Tensor) -> torch.Tensor:
        """q (B, m) chart coordinates -> z (B, k)."""
        q = q.to(self.rest.dtype)
        return (self.rest + torch.sqrt(torch.relu(q)) @ self.opening
                + torch.sqrt(torch.relu(-q)) @ self.closing)


def bank_chart(positions: Callable[[torch.Tensor], torch.Tensor], rest_latent: torch.Tensor,
               offsets: torch.Tensor, masses: torch.Tensor, count: int) -> BankChart:
    """The chart of the module docstring. positions: z (B, k) -> (B, n, 3) metres; rest_latent (k,);
    offsets (E, k); masses (n,) kg (massless points do not count); count: modes wanted (at most
    the number of offsets that move the surface)."""
    with torch.no_grad():
        rest = positions(rest_latent.reshape(1, -1))
        moved = positions(rest_latent + PROBE ** 0.5 * offsets)
    weights = masses.to(rest.dtype).sqrt()[None, :, None]
    changes = ((moved - rest) * weights).flatten(1)  # (E, 3n), sqrt(m)-weighted
    norms = changes.norm(dim=1)
    usable = norms > 1e-6 * max(float(norms.max()), 1e-30)
    if not bool(usable.any()):
        raise ValueError("no bank offset moves the surface")
    _, singular, directions = torch.linalg.svd(changes[usable], full_matrices=False)
    significant = int((singular >= MIN_SINGULAR * singular[0]).sum())
    modes = directions[:max(1, min(int(count), significant))]
    cosines = (changes @ modes.T) / norms.clamp_min(1e-30)[:, None]  # (E, m)
    cosines = torch.where(usable[:, None], cosines, torch.zeros_like(cosines))
    # orient each mode so that its best-aligned offset opens it (singular vectors have no sign)
    cosines = cosines * torch.where(cosines.max(dim=0).values >= -cosines.min(dim=0).values, 1.0, -1.0)
    opening_index, closing_index = cosines.argmax(dim=0), cosines.argmin(dim=0)
    alignment = torch.stack([cosines.max(dim=0).values, -cosines.min(dim=0).values], dim=1)
    opening = offsets[opening_index]
    # the closing side's starting speed matched to the opening side's (x ~ x_0 + s a on each side)
    speed_ratio = (norms[opening_index] / norms[closing_index].clamp_min(1e-30)).clamp(0.01, 100.0)
    closes = (alignment[:, 1] >= MIN_ALIGNMENT)[:, None]
    closing = torch.where(closes, offsets[closing_index] * speed_ratio.sqrt()[:, None].to(offsets.dtype),
                          torch.zeros_like(opening))
    return BankChart(rest_latent.reshape(-1), opening, closing, alignment)
