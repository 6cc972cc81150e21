"""Simulation coordinates from the posterior bank: a power chart through real motions.

The decoder is flat at z_rest (docs/physics.md, section 5): along the latent offset d of a real
motion, the surface moves like t^2 (a lid) to t^3.6 (some doors) at z_rest + t d, so a linear chart
z_rest + A q has J = dx/dq ~ 0 at q = 0 and no force (gravity included) can start the motion.

The chart keeps `count` modes. For each of the instance's bank offsets d_j (instance.motion_offsets),
v_j = x(z_rest + sqrt(PROBE) d_j) - x_0 is the shape change it starts with (mass-weighted, at the
simulation points). The modes are the leading right singular vectors u_i of the stacked v_j (those
with at least MIN_SINGULAR of the largest singular value: opening and closing one hinge give two
nearly opposite v_j, which are one mode, not two); mode i opens along the offset whose v_j is most
aligned with +u_i and closes along the one most aligned with -u_i. When no offset points within 60
degrees of -u_i, the mode does not close: the shape stays at rest for q_i < 0, a joint limit
(-d_open would not do: the decoder is flat at z_rest, so to first order -d_open repeats the motion
of +d_open). Then

    z(q) = z_rest + sum_i t_open_i(max(q_i, 0)) d_open_i + t_close_i(max(-q_i, 0)) d_close_i,
    t_side(s) = (s a_open / a_side)^(1 / p_side),

where each side's path moves the points by D(t) = |x(z_rest + t d) - x_0|_M ~ a t^p (the kinetic
metric's norm, sqrt(kg) m), a power law fitted to D on POWER_RANGE. So D is linear in s on each side
(s = D / a_open): the motion starts at a finite, non-zero rate whatever order the decoder starts
with, both sides start at the same rate, and q_i = 1 is about a whole opening bank motion. A lid
(p ~ 2) gets the square-root chart. The fit starts at t = POWER_RANGE[0] because closer to z_rest
the decoder has a small term linear in t (0.2 mm at t = 0.01) that the motion is not. The map is not
smooth at q_i = 0 (x ~ s + s^(1 + 1/p)); the surrogate that the solver differentiates is. No part
labels are used: the modes come from the motions of the nearest training shapes.

With one mode and a drive (the contact velocities or push forces: predict.action_drive), the mode
is instead the bank motion that the drive excites most (`excited_offset`). A load f (n, 3) on a
one-coordinate system x(s) = x_0 + s u starts it with acceleration (u.f) / (u^T M u) (Gauss's
principle), and an impulse along a contact velocity v gives it the contact speed
(u_c.v)^2 / (u^T M u) per unit impulse (the least kinetic energy per unit contact speed, Kelvin's
theorem): both choose the motion with the largest (u.f)^2 / (u^T M u) among those that go the way
f pushes (u.f > 0). Held points count PIN_WEIGHT times their mass, as a wall or a table would make
them heavy. The SVD modes above are what the bank has in common; this is what the contact does to
it: a door pushed at its edge picks a motion that turns the door the way it is pushed. (Gravity
alone keeps the SVD mode: the motion it excites most fell less like a rigid lid, docs/physics.md.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

PROBE = 0.1  # chart coordinate at which each offset's starting shape change is measured
MIN_ALIGNMENT = 0.5  # cosine below which no offset counts as closing a mode
MIN_SINGULAR = 0.1  # modes whose singular value is under this fraction of the largest are dropped
PIN_WEIGHT = 100.0  # a held point's motion costs this many times its mass in excited_offset
POWER_RANGE = (0.25, 1.0)  # the path parameters t over which D(t) ~ a t^p is fitted
POWER_SAMPLES = 7  # points of that fit
POWER_LIMITS = (1.0, 6.0)  # the fitted exponents are kept within these


@dataclass
class BankChart:
    """rest (k,): z_rest; opening, closing (m, k): each mode's latent steps (closing zero for a mode
    that does not close); alignment (m, 2): the cosine of the chosen offsets' shape changes with +u_i
    and -u_i; exponents (m, 2): p of each side (opening, closing); rates (m, 2): a_open / a_side,
    so that t_side(s) = (rates s)^(1 / exponents)."""

    rest: torch.Tensor
    opening: torch.Tensor
    closing: torch.Tensor
    alignment: torch.Tensor
    exponents: torch.Tensor
    rates: torch.Tensor

    @property
    def num_modes(self) -> int:
        return int(self.opening.shape[0])

    def latents(self, q: torch.Tensor) -> torch.Tensor:
        """q (B, m) chart coordinates -> z (B, k)."""
        q = q.to(self.rest.dtype)
        t_open = (self.rates[:, 0] * torch.relu(q)) ** (1.0 / self.exponents[:, 0])
        t_close = (self.rates[:, 1] * torch.relu(-q)) ** (1.0 / self.exponents[:, 1])
        return self.rest + t_open @ self.opening + t_close @ self.closing


def power_laws(positions: Callable[[torch.Tensor], torch.Tensor], rest_latent: torch.Tensor, rest: torch.Tensor,
               steps: torch.Tensor, masses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(a (S,), p (S,)) of D(t) = |x(z_rest + t d) - x_0|_M ~ a t^p for the latent steps d (S, k),
    x_0 = rest (n, 3): least squares in log-log on POWER_RANGE; a in sqrt(kg) m. A step that moves
    nothing gets p = 2, a = 1 (it is never simulated: its side is zero)."""
    t = torch.linspace(*POWER_RANGE, POWER_SAMPLES, dtype=rest_latent.dtype, device=rest_latent.device)
    with torch.no_grad():
        points = positions((rest_latent + t[None, :, None] * steps[:, None, :]).reshape(-1, steps.shape[1]))
    points = points.reshape(steps.shape[0], len(t), *rest.shape)
    distance = torch.einsum("n,spnk->sp", masses.to(points.dtype), (points - rest).square()).sqrt()
    moves = (distance > 0).all(dim=1)
    log_t = t.log().to(distance.dtype)
    log_d = distance.clamp_min(1e-300).log()
    centred = log_t - log_t.mean()
    p = ((log_d - log_d.mean(1, keepdim=True)) @ centred) / centred.square().sum()
    p = p.clamp(*POWER_LIMITS)
    log_a = log_d.mean(1) - p * log_t.mean()
    return torch.where(moves, log_a.exp(), torch.ones_like(p)), torch.where(moves, p, torch.full_like(p, 2.0))


def excited_offset(changes: torch.Tensor, masses: torch.Tensor, drive: torch.Tensor,
                   pinned: torch.Tensor | None = None) -> int | None:
    """Index of the offset whose starting shape change the drive excites most (module docstring), or
    None when the drive does work on none of them. changes (E, n, 3) metres; masses (n,) kg; drive
    (n, 3): a load (N) or contact velocities (m/s) per point; pinned (n,) 0/1 or None."""
    heavy = masses.to(changes.dtype)
    if pinned is not None:
        heavy = heavy * (1.0 + (PIN_WEIGHT - 1.0) * pinned.to(changes.dtype))
    work = torch.einsum("enk,nk->e", changes, drive.to(changes.dtype))
    inertia = torch.einsum("n,enk,enk->e", heavy, changes, changes)
    score = torch.where((work > 0) & (inertia > 0), work.square() / inertia.clamp_min(1e-300),
                        torch.zeros_like(work))
    return int(torch.argmax(score)) if float(score.max()) > 0 else None


def bank_chart(positions: Callable[[torch.Tensor], torch.Tensor], rest_latent: torch.Tensor,
               offsets: torch.Tensor, masses: torch.Tensor, count: int, drive: torch.Tensor | None = None,
               pinned: torch.Tensor | None = None) -> BankChart:
    """The chart of the module docstring. positions: z (B, k) -> (B, n, 3) metres; rest_latent (k,);
    offsets (E, k); masses (n,) kg (massless points do not count); count: modes wanted (at most
    the number of offsets that move the surface); drive (n, 3) and pinned (n,): with count = 1, the
    mode is the motion they excite most (excited_offset; None: the leading SVD mode)."""
    with torch.no_grad():
        rest = positions(rest_latent.reshape(1, -1))
        moved = positions(rest_latent + PROBE ** 0.5 * offsets)
    weights = masses.to(rest.dtype).sqrt()[None, :, None]
    changes = ((moved - rest) * weights).flatten(1)  # (E, 3n), sqrt(m)-weighted
    norms = changes.norm(dim=1)
    usable = norms > 1e-6 * max(float(norms.max()), 1e-30)
    if not bool(usable.any()):
        raise ValueError("no bank offset moves the surface")
    excited = (excited_offset(moved - rest, masses, drive, pinned)
               if drive is not None and int(count) == 1 else None)
    if excited is not None:
        modes = changes[excited:excited + 1] / norms[excited]
    else:
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
    closes = (alignment[:, 1] >= MIN_ALIGNMENT)[:, None]
    closing = torch.where(closes, offsets[closing_index], torch.zeros_like(opening))
    rate, power = power_laws(positions, rest_latent.reshape(-1), rest[0], torch.cat([opening, offsets[closing_index]]),
                             masses)
    rate, power = rate.reshape(2, -1).T, power.reshape(2, -1).T  # (m, 2): opening, closing
    dtype = rest_latent.dtype
    return BankChart(rest_latent.reshape(-1), opening, closing, alignment, power.to(dtype),
                     (rate[:, :1] / rate).to(dtype))
