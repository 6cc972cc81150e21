"""One training run's configuration: the model, data, loss and training sections of a YAML file."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from neurok_ros.config_files import load_yaml
from neurok_ros.errors import NeurokInputError
from neurok_ros.model.config import ModelConfig
from neurok_ros.model.losses import LossConfig
from neurok_ros.training.pair_dataset import PairConfig

PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class TrainingConfig:
    """batch_size: pairs per optimizer step per process (DDP: per rank); steps: total optimizer
    steps; learning_rate: AdamW peak, reached after warmup_steps, then cosine decay to
    learning_rate * min_learning_rate_ratio at `steps`; grad_clip: max global gradient norm;
    val_every / checkpoint_every / log_every: in steps; val_pairs: fixed validation pairs, spread
    over the split; workers: DataLoader worker processes (0 = load in the training process); precision: "fp32", or
    "bf16" autocast (CUDA); max_minutes: wall-clock budget (0 = none): the run stops and saves once
    it is spent, and the cosine schedule follows whichever of steps and time is further along
    (a time-budgeted run is not bit-reproducible)."""

    batch_size: int = 16
    steps: int = 10000
    learning_rate: float = 5e-4
    min_learning_rate_ratio: float = 0.05
    warmup_steps: int = 200
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    val_every: int = 500
    val_pairs: int = 256
    checkpoint_every: int = 500
    log_every: int = 10
    workers: int = 0
    seed: int = 0
    precision: str = "fp32"
    max_minutes: float = 0.0

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise NeurokInputError(f"training precision {self.precision!r} is not one of {PRECISIONS}")
        if self.batch_size < 1 or self.steps < 0 or self.max_minutes < 0:
            raise NeurokInputError("training batch_size must be positive, steps and max_minutes non-negative")


def _from(cls, data, section):
    data = dict(data or {})
    unknown = sorted(set(data) - {f.name for f in fields(cls)})
    if unknown:
        raise NeurokInputError(f"unknown {section} config keys {unknown}")
    return cls(**data)


@dataclass(frozen=True)
class RunConfig:
    model: ModelConfig
    data: PairConfig
    loss: LossConfig
    training: TrainingConfig

    def __post_init__(self):
        if self.loss.prior_draws and self.data.coverage_points == 0:
            raise NeurokInputError("loss.coverage_weight or loss.rigidity_weight > 0 needs data.coverage_points > 0 "
                                   "(the pose sets they compare prior draws with)")

    @classmethod
    def from_dict(cls, data: dict) -> "RunConfig":
        unknown = sorted(set(data) - {"model", "data", "loss", "training"})
        if unknown:
            raise NeurokInputError(f"unknown config sections {unknown}; expected model, data, loss, training")
        return cls(model=ModelConfig.from_dict(data.get("model")),
                   data=PairConfig.from_dict(data.get("data")),
                   loss=LossConfig.from_dict(data.get("loss")),
                   training=_from(TrainingConfig, data.get("training"), "training"))

    def to_dict(self) -> dict:
        """Plain dict of primitives (YAML/JSON and weights_only-checkpoint safe)."""
        return {"model": self.model.to_dict(), "data": self.data.to_dict(),
                "loss": self.loss.to_dict(), "training": asdict(self.training)}

    def with_training(self, **changes) -> "RunConfig":
        return replace(self, training=replace(self.training, **changes))


def _scalar(value):
    """YAML reads "3e-4" (no dot) as a string: take it as the number it means."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def load_run_config(path: str | Path, overrides: list[str] | tuple = ()) -> RunConfig:
    """Read config/model/<name>.yaml (or any file of the same layout), then apply "section.key=value"
    overrides (value parsed as YAML), e.g. ["model.output=displacement", "data.augment=false"]."""
    import yaml

    data = load_yaml(path)
    for item in overrides:
        key, sep, value = item.partition("=")
        section, dot, name = key.strip().partition(".")
        if not sep or not dot or not name:
            raise NeurokInputError(f"override {item!r} is not of the form section.key=value")
        if section not in ("model", "data", "loss", "training"):
            raise NeurokInputError(f"override {item!r}: unknown section {section!r}")
        data.setdefault(section, {})[name] = _scalar(yaml.safe_load(value))
    return RunConfig.from_dict(data)
