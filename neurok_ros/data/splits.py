"""Train / val / test splits by instance, optionally holding out whole categories."""
from __future__ import annotations

import zlib

import numpy as np

from neurok_ros.errors import NeurokInputError


def make_splits(files: dict[str, list[str]], seed: int, val_fraction: float, test_fraction: float,
                holdout_categories: list[str]) -> dict[str, list[str]]:
    """Split file names per category (so every category is in every split), deterministically.

    files: category -> instance file names. Held-out categories go entirely to "test_holdout";
    they appear in no other split. Returns {"train", "val", "test", "test_holdout"} -> sorted names.
    """
    if not (0 <= val_fraction < 1 and 0 <= test_fraction < 1 and val_fraction + test_fraction < 1):
        raise NeurokInputError("val and test fractions must be in [0, 1) and sum to less than 1")
    unknown = sorted(set(holdout_categories) - set(files))
    if unknown:
        raise NeurokInputError(f"held-out categories {unknown} are not in the dataset")
    splits = {"train": [], "val": [], "test": [], "test_holdout": []}
    for category in sorted(files):
        names = sorted(files[category])
        if category in holdout_categories:
            splits["test_holdout"].extend(names)
            continue
        rng = np.random.default_rng([seed, zlib.crc32(category.encode())])
        order = rng.permutation(len(names))
        n_test = int(round(test_fraction * len(names)))
        n_val = int(round(val_fraction * len(names)))
        while n_test + n_val > len(names) - 1 and n_test + n_val > 0:  # keep one for training
            if n_val >= n_test:
                n_val -= 1
            else:
                n_test -= 1
        splits["test"].extend(names[i] for i in order[:n_test])
        splits["val"].extend(names[i] for i in order[n_test:n_test + n_val])
        splits["train"].extend(names[i] for i in order[n_test + n_val:])
    return {name: sorted(items) for name, items in splits.items()}
