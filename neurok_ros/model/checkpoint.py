"""Checkpoints that load with torch.load(weights_only=True): tensors and primitive types only.

A checkpoint file (the one shipped and used for inference, < 25 MB) holds:
  format, format_version, model_state (tensors), config (RunConfig.to_dict()), parameter_count,
  step, metrics (validation metrics, floats), dataset (manifest facts: dataset_version, seed,
  frames, categories and their kinds, holdout categories, train instance count), torch_version, saved_at;
  and, once `neurok bank` has added it, posterior_bank (neurok_ros/model/posterior_bank.py).
The optimizer state needed by --resume goes to a sidecar file "<checkpoint>.train-state.pt" so the
checkpoint itself stays small. Writes are atomic (temporary file, then rename).
"""
from __future__ import annotations

import datetime
import os
from pathlib import Path

import torch

from neurok_ros.errors import NeurokInputError

FORMAT = "neurok-checkpoint"
FORMAT_VERSION = 1
MAX_CHECKPOINT_MEGABYTES = 25.0
_REQUIRED = ("format", "format_version", "model_state", "config", "step")


class CheckpointError(NeurokInputError):
    """A checkpoint that cannot be written or read as a NeuROK checkpoint."""


def train_state_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".train-state.pt")


def atomic_save(obj, path: Path, max_megabytes: float | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(obj, tmp)
    size = tmp.stat().st_size / 2 ** 20
    if max_megabytes is not None and size > max_megabytes:
        tmp.unlink()
        raise CheckpointError(f"checkpoint would be {size:.1f} MB, over the {max_megabytes:g} MB limit")
    os.replace(tmp, path)


def save_checkpoint(path: str | Path, model: torch.nn.Module, config: dict, step: int,
                    metrics: dict | None = None, dataset: dict | None = None,
                    optimizer: torch.optim.Optimizer | None = None,
                    max_megabytes: float = MAX_CHECKPOINT_MEGABYTES) -> Path:
    """Write the checkpoint (and, given an optimizer, its train-state sidecar); returns the path."""
    path = Path(path)
    state = {name: tensor.detach().cpu().clone() for name, tensor in model.state_dict().items()}
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model_state": state,
        "config": config,
        "parameter_count": int(sum(p.numel() for p in model.parameters())),
        "step": int(step),
        "metrics": {k: float(v) for k, v in (metrics or {}).items()},
        "dataset": dict(dataset or {}),
        "torch_version": str(torch.__version__),
        "saved_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    if optimizer is not None:
        atomic_save({"format": FORMAT, "step": int(step), "optimizer": optimizer.state_dict()},
                    train_state_path(path))
    atomic_save(payload, path, max_megabytes)
    return path


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint with weights_only=True; CheckpointError when it is missing or not ours."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no such checkpoint: {path}")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # unpickling errors come in many types
        raise CheckpointError(f"{path}: not a loadable checkpoint ({type(exc).__name__}: {exc})") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or any(k not in payload for k in _REQUIRED):
        raise CheckpointError(f"{path}: not a NeuROK checkpoint")
    if payload["format_version"] > FORMAT_VERSION:
        raise CheckpointError(f"{path}: checkpoint format {payload['format_version']} is newer than this "
                              f"library's {FORMAT_VERSION}")
    return payload


def load_train_state(path: str | Path, map_location: str | torch.device = "cpu") -> dict | None:
    """The optimizer sidecar of checkpoint `path` (weights_only=True), or None when there is none."""
    sidecar = train_state_path(path)
    if not sidecar.is_file():
        return None
    payload = torch.load(sidecar, map_location=map_location, weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{sidecar}: not a NeuROK train state")
    return payload


def load_model(path: str | Path, device: str | torch.device = "cpu"):
    """(NeuROKModel in eval mode on `device`, checkpoint dict) from a checkpoint file."""
    from neurok_ros.model.conditional_vae import NeuROKModel
    from neurok_ros.model.posterior_bank import PosteriorBank

    payload = load_checkpoint(path, map_location=device)
    model = NeuROKModel(payload["config"]["model"])
    model.load_state_dict(payload["model_state"])
    if "posterior_bank" in payload:
        try:
            model.posterior_bank = PosteriorBank.from_payload(payload["posterior_bank"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CheckpointError(f"{path}: unreadable posterior bank ({exc})") from None
    return model.to(device).eval(), payload
