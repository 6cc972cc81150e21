"""Writing a finished matplotlib figure to disk."""
from __future__ import annotations

from pathlib import Path


def save_figure(fig, out_path: str | Path, **savefig_options) -> Path:
    """Save `fig` to out_path (parent folders created), close it, return the path."""
    import matplotlib.pyplot as plt

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path, **savefig_options)
    plt.close(fig)
    return out_path
