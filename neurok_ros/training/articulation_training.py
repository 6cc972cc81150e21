"""Training the articulation head (model/articulation_head.py) on procedural instances.

    instances = split_instances("train", per_category=60)            # generated in memory
    train_articulation_head(model, instances, val, out="head.pt", minutes=20)

The NeuROK model stays frozen: each batch's shape tokens come from its prior encoder without
gradient. AdamW with a cosine schedule; a progress bar; the head is saved whenever the validation
loss improves, with its validation numbers (class accuracy, mean axis error of moving points).
"""
from __future__ import annotations

import math
import multiprocessing
import time

import numpy as np
import torch

from neurok_ros.data.instance_format import Instance
from neurok_ros.model.articulation_head import ArticulationHead, head_loss, load_head, save_head
from neurok_ros.training.articulation_examples import articulation_example


def _generate(task: tuple[str, int]) -> Instance:
    from neurok_ros.data.categories import all_categories

    category, seed = task
    return all_categories()[category][1](seed, 16)


def split_instances(split: str, per_category: int, frames: int = 16, dataset_seed: int = 0,
                    workers: int = 2) -> list[Instance]:
    """The first `per_category` instances of each articulated category in `split` of the default
    dataset configuration (200 per category, 10 % val, 10 % test), generated in memory."""
    from neurok_ros.data.categories import all_categories
    from neurok_ros.data.generate import instance_file_name, instance_seed
    from neurok_ros.data.splits import make_splits

    categories = sorted(c for c, (kind, _) in all_categories().items() if kind == "articulated")
    files = {c: [instance_file_name(c, i) for i in range(200)] for c in categories}
    chosen = set(make_splits(files, dataset_seed, 0.1, 0.1, [])[split])
    tasks = []
    for category in categories:
        indices = [i for i in range(200) if instance_file_name(category, i) in chosen][:per_category]
        tasks += [(category, instance_seed(dataset_seed, category, i)) for i in indices]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(_generate, tasks, chunksize=4)


def batch_of(instances: list[Instance], size: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    """`size` examples of random instances in random frames, stacked."""
    examples = []
    for _ in range(size):
        instance = instances[rng.integers(len(instances))]
        examples.append(articulation_example(instance, int(rng.integers(instance.num_frames)), rng))
    return {key: torch.as_tensor(np.stack([e[key] for e in examples])) for key in examples[0]}


@torch.no_grad()
def validation(model, head: ArticulationHead, batches: list[dict]) -> dict:
    """Mean loss, class accuracy and axis error (degrees, moving points) over fixed batches."""
    losses, correct, total, angles = [], 0, 0, []
    for batch in batches:
        _, tokens = model.encode_prior(batch["points"])
        out = head(tokens, batch["queries"])
        loss, _ = head_loss(out, batch["classes"], batch["axis"], batch["offset"])
        losses.append(float(loss))
        correct += int((out.logits.argmax(-1) == batch["classes"]).sum())
        total += batch["classes"].numel()
        moving = batch["classes"] > 0
        cosine = (out.axis * batch["axis"]).sum(-1).abs().clamp(max=1.0)[moving]
        angles.append(torch.rad2deg(torch.arccos(cosine)))
    return {"loss": float(np.mean(losses)), "class_accuracy": correct / max(total, 1),
            "axis_deg": float(torch.cat(angles).mean()) if angles else 0.0}


def train_articulation_head(model, train: list[Instance], val: list[Instance], out, minutes: float = 20.0,
                            batch_size: int = 12, lr: float = 1e-3, seed: int = 0, val_every: int = 200,
                            max_steps: int = 100_000, init=None, progress: bool = True) -> dict:
    """Train a head for `minutes` (or max_steps), new or continuing from the head file `init`;
    returns the best validation numbers."""
    from tqdm import tqdm

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    if init is None:
        head = ArticulationHead(width=model.config.width, heads=model.config.heads,
                                fourier_frequencies=model.config.fourier_frequencies)
    else:
        head = load_head(init).train()
    optimiser = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=1e-4)
    val_batches = [batch_of(val, batch_size, np.random.default_rng(1000 + i)) for i in range(4)]
    started, best, step = time.perf_counter(), None, 0
    bar = tqdm(desc="articulation head", unit="step", disable=not progress)
    while step < max_steps:
        elapsed = (time.perf_counter() - started) / 60.0
        if elapsed >= minutes:
            break
        for group in optimiser.param_groups:
            group["lr"] = lr * 0.5 * (1 + math.cos(math.pi * min(1.0, elapsed / minutes)))
        batch = batch_of(train, batch_size, rng)
        with torch.no_grad():
            _, tokens = model.encode_prior(batch["points"])
        loss, parts = head_loss(head(tokens, batch["queries"]), batch["classes"], batch["axis"], batch["offset"])
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
        optimiser.step()
        step += 1
        bar.update(1)
        bar.set_postfix(loss=f"{float(loss.detach()):.3f}", ce=f"{parts['ce']:.3f}", axis=f"{parts['axis']:.3f}")
        if step % val_every == 0:
            head.eval()
            numbers = validation(model, head, val_batches)
            head.train()
            numbers["step"] = step
            bar.write(f"step {step}: val {numbers}")
            if best is None or numbers["loss"] < best["loss"]:
                best = numbers
                save_head(out, head, {"step": step, "train_instances": len(train), **numbers})
    bar.close()
    if best is None:
        head.eval()
        best = {**validation(model, head, val_batches), "step": step}
        save_head(out, head, {"train_instances": len(train), **best})
    return best
