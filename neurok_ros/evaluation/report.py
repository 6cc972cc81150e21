"""Per-pair records -> per-method and per-category summaries -> the markdown report.

A record is one (method, pose pair): {"method", "label", "file", "category", "kind", "pose_a", "pose_b",
"num_vertices", "chamfer_l1", "chamfer_l2", "iou" (None where undefined: TARGET encloses no volume,
e.g. a flat sheet), "ik_seconds", "encode_seconds", "k", "k_q", "loss", "error" (None or a one-line reason)}.
Every number in the report is computed here from the records.
"""
from __future__ import annotations

import math

import numpy as np

PAPER_TABLE_1 = ("Paper Table 1 (PartNet-Mobility; different data, for orientation only), Chamfer-L1 / IoU: "
                 "NeuROK 0.028 / 0.764, KeyPointDeformer 0.067 / 0.570, CANOR 0.082 / 0.568.")


def _values(records: list[dict], key: str) -> np.ndarray:
    out = [r.get(key) for r in records]
    return np.array([np.nan if v is None else float(v) for v in out], dtype=np.float64)


def summarise(records: list[dict]) -> dict:
    """{"pairs", "failed", "chamfer_l1", "chamfer_l2" (means over scored pairs), "iou" (nanmean),
    "iou_count" (pairs where IoU is defined), "ik_seconds", "encode_seconds" (medians), "k_q" (mean)}."""
    scored = [r for r in records if not r.get("error")]

    def mean(key):
        values = _values(scored, key)
        values = values[np.isfinite(values)]
        return float(values.mean()) if len(values) else math.nan

    def median(key):
        values = _values(scored, key)
        values = values[np.isfinite(values)]
        return float(np.median(values)) if len(values) else math.nan

    iou = _values(scored, "iou")
    return {"pairs": len(records), "failed": len(records) - len(scored),
            "chamfer_l1": mean("chamfer_l1"), "chamfer_l2": mean("chamfer_l2"),
            "iou": float(np.nanmean(iou)) if np.isfinite(iou).any() else math.nan,
            "iou_count": int(np.isfinite(iou).sum()),
            "ik_seconds": median("ik_seconds"), "encode_seconds": median("encode_seconds"),
            "k_q": mean("k_q")}


def group(records: list[dict], key: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for record in records:
        out.setdefault(record[key], []).append(record)
    return out


def fmt(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def fmt_l1(value) -> str:
    return fmt(value, 4)


def fmt_l2(value) -> str:
    return fmt(value, 5)


def fmt_iou(value) -> str:
    return fmt(value, 3)


def fmt_seconds(value) -> str:
    return fmt(value, 2)


def main_table(methods: list[tuple[str, str]], records: list[dict]) -> list[str]:
    """Markdown lines: one row per (key, label) of methods that has records."""
    by_method = group(records, "method")
    lines = ["| method | pairs | Chamfer-L1 mean | Chamfer-L2 mean | IoU mean (count) | IK seconds median |",
             "|---|---:|---:|---:|---:|---:|"]
    for key, label in methods:
        if key not in by_method:
            continue
        s = summarise(by_method[key])
        pairs = f"{s['pairs']}" + (f" ({s['failed']} failed)" if s["failed"] else "")
        lines.append(f"| {label} | {pairs} | {fmt_l1(s['chamfer_l1'])} | {fmt_l2(s['chamfer_l2'])} | "
                     f"{fmt_iou(s['iou'])} ({s['iou_count']}) | {fmt_seconds(s['ik_seconds'])} |")
    return lines


def category_table(methods: list[tuple[str, str]], records: list[dict],
                   unseen: set[str] = frozenset()) -> list[str]:
    """Markdown lines: per category, Chamfer-L1 / IoU of each (key, short name) in methods."""
    present = [(k, n) for k, n in methods if any(r["method"] == k for r in records)]
    header = "| category | kind | pairs | " + " | ".join(f"{n} CD-L1 / IoU" for _, n in present) + " |"
    lines = [header, "|---|---|---:|" + "---:|" * len(present)]
    by_category = group(records, "category")
    for category in sorted(by_category):
        rows = by_category[category]
        by_method = group(rows, "method")
        pairs = max((len(v) for v in by_method.values()), default=0)
        name = category + (" (unseen)" if category in unseen else "")
        cells = []
        for key, _ in present:
            s = summarise(by_method.get(key, []))
            cells.append(f"{fmt_l1(s['chamfer_l1'])} / {fmt_iou(s['iou'])}")
        lines.append(f"| {name} | {rows[0].get('kind', '')} | {pairs} | " + " | ".join(cells) + " |")
    return lines


TIE = {"chamfer_l1": 1e-6, "chamfer_l2": 1e-8, "iou": 1e-4}  # differences below these are float noise


def paired_difference(records: list[dict], reference: str, other: str, key: str,
                      resamples: int = 2000, seed: int = 0) -> dict:
    """Paired comparison of method `other` against `reference` on metric `key` over the pose pairs
    where both have a finite value: {"pairs", "mean" (other - reference), "low", "high" (95% percentile
    bootstrap interval of the mean, pairs resampled with replacement, seeded), "other_better",
    "reference_better" (pair counts; for IoU higher is better, for Chamfer lower; differences within
    TIE[key], e.g. two predictions that are both SOURCE up to float rounding, count as neither)}."""
    by_file = {}
    for record in records:
        if record["method"] in (reference, other) and not record.get("error") and record.get(key) is not None:
            value = float(record[key])
            if math.isfinite(value):
                by_file.setdefault(record["file"], {})[record["method"]] = value
    both = [v for v in by_file.values() if len(v) == 2]
    if not both:
        return {"pairs": 0, "mean": math.nan, "low": math.nan, "high": math.nan,
                "other_better": 0, "reference_better": 0}
    diff = np.array([v[other] - v[reference] for v in both])
    means = diff[np.random.default_rng(seed).integers(0, len(diff), (resamples, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    better = diff if key == "iou" else -diff  # > 0 where other is better
    tie = TIE.get(key, 0.0)
    return {"pairs": len(diff), "mean": float(diff.mean()), "low": float(low), "high": float(high),
            "other_better": int((better > tie).sum()), "reference_better": int((better < -tie).sum())}


def paired_table(methods: list[tuple[str, str]], records: list[dict], reference: str = "neurok") -> list[str]:
    """Markdown lines: each method of (key, label) against `reference`, pair by pair (paired_difference)."""
    lines = ["| method | pairs | Chamfer-L1 difference [95% interval] | better / worse | "
             "IoU difference [95% interval] | better / worse |", "|---|---:|---:|---:|---:|---:|"]
    present = {r["method"] for r in records}
    for key, label in methods:
        if key == reference or key not in present:
            continue
        chamfer, iou = (paired_difference(records, reference, key, metric) for metric in ("chamfer_l1", "iou"))
        cells = [(f"{d['mean']:+.{digits}f} [{d['low']:+.{digits}f}, {d['high']:+.{digits}f}]" if d["pairs"] else "n/a")
                 + f" | {d['other_better']} / {d['reference_better']}" for d, digits in ((chamfer, 4), (iou, 3))]
        pairs = f"{chamfer['pairs']}" + (f" ({iou['pairs']} with IoU)" if iou["pairs"] != chamfer["pairs"] else "")
        lines.append(f"| {label} | {pairs} | " + " | ".join(cells) + " |")
    return lines


def checkpoint_lines(checkpoints: list[dict]) -> list[str]:
    """Markdown lines describing each checkpoint: {"role", "path", "step", "parameter_count", "output",
    "augment", "metrics", "dataset"}."""
    lines = ["| used for | file | step | parameters | output | augmentation | val point error |",
             "|---|---|---:|---:|---|---|---:|"]
    for c in checkpoints:
        lines.append(f"| {c['role']} | `{c['path']}` | {c['step']} | {c['parameter_count']:,} | {c['output']} | "
                     f"{'yes' if c['augment'] else 'no'} | {fmt(c['metrics'].get('val_point_error'))} |")
    lines.append("")
    for c in checkpoints:
        d = dict(c["dataset"])
        categories = d.pop("train_categories", [])
        d.pop("kinds", None)
        facts = ", ".join(f"{k} {v}" for k, v in sorted(d.items()))
        lines.append(f"- {c['role']} training data: {facts}; {len(categories)} train categories: "
                     f"{', '.join(categories)}.")
    return lines
