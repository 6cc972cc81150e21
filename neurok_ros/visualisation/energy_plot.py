"""Energy curves of a simulation: kinetic, potential and total energy against time."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from neurok_ros.visualisation.figure_file import save_figure


def plot_energy(times, energy, out_path: str | Path, title: str | None = None, work=None, dissipated=None,
                relative: bool = True) -> Path:
    """One PNG: T, V and T + V (J) against time (s); energy (T, 3) in that column order.

    relative: plot V - V(0) and E - E(0) (the gravitational potential's zero is arbitrary; only its
    changes matter), with the total on a second, zoomed panel. work / dissipated (T,): when given,
    E - W + D is drawn too (constant for an exact solver with forces or damping).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.asarray(times, dtype=np.float64)
    e = np.asarray(energy, dtype=np.float64)
    kinetic, potential, total = e[:, 0], e[:, 1], e[:, 2]
    if relative:
        potential, total = potential - potential[0], total - total[0]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5.5), dpi=100, sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    top.plot(t, kinetic, label="kinetic T")
    top.plot(t, potential, label="potential V - V(0)" if relative else "potential V")
    top.plot(t, total, color="k", lw=1.5, label="total T + V" + (" - E(0)" if relative else ""))
    top.set_ylabel("energy (J)")
    top.legend(fontsize=8, loc="best")
    scale = max(float(np.abs(kinetic).max()), float(np.abs(potential).max()), 1e-300)
    bottom.plot(t, 100.0 * total / scale, color="k", label="T + V")
    if work is not None or dissipated is not None:
        balance = total - (np.asarray(work) if work is not None else 0.0) + (
            np.asarray(dissipated) if dissipated is not None else 0.0)
        if relative:
            balance = balance - balance[0]
        bottom.plot(t, 100.0 * balance / scale, color="tab:red", ls="--", label="T + V - W + D")
        bottom.legend(fontsize=8, loc="best")
    bottom.set_ylabel("change of total\n(% of energy exchanged)")
    bottom.set_xlabel("time (s)")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    if title:
        top.set_title(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, out_path)
