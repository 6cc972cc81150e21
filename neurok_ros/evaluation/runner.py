"""The whole evaluation in one call: select pose pairs, run every method on every pair, score, report.

    result = run_evaluation(EvalConfig(data="/data/neurok", pairs_per_category=5))
    result.markdown, result.records

Rows: NeuROK (default checkpoint, active subspace); ablations "no active subspace" (same checkpoint,
whole latent space), "displacement output" and "no augmentation" (their own checkpoints, skipped when
not given); baselines identity and PCA. All methods see the same SOURCE mesh and the same TARGET
samples of each pair, and are scored by metrics_in_frame in SOURCE's normalised frame.
"""
from __future__ import annotations

import datetime
import os
import platform
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from neurok_ros.data.instance_format import load_instance
from neurok_ros.errors import NeurokInputError
from neurok_ros.evaluation import report
from neurok_ros.evaluation.methods import IdentityMethod, Method, NeuROKMethod, PCAMethod
from neurok_ros.evaluation.pca_baseline import PCAConfig, load_or_fit_subspace
from neurok_ros.evaluation.pose_pairs import pair_heading, pair_meshes, pose_pair, select_files, target_samples
from neurok_ros.evaluation.record_reuse import metric_gap, record_key, reproduces
from neurok_ros.geometry.metrics import DEFAULT_SEED, metrics_in_frame
from neurok_ros.geometry.normalisation import NormalisingTransform
from neurok_ros.kinematics.ik_config import IKConfig
from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT, EncodingConfig, load_default_model
from neurok_ros.kinematics.inverse_kinematics import FALLBACK_GAP_RATIO
from neurok_ros.strict_json import finite_or_none
from neurok_ros.training.pair_dataset import split_files

ABLATIONS = {"displacement": "Ablation: displacement output", "no_augment": "Ablation: no augmentation"}
DEFAULT_PCA_CACHE = Path(tempfile.gettempdir()) / "neurok_eval_cache"
# (key, table label, short name for the per-category table)
ROWS = (("neurok", "NeuROK", "NeuROK"),
        ("no_subspace", "Ablation: no active subspace (k_q = k)", None),
        ("unanchored", "Ablation: no rest anchoring (raw decoder output)", None),
        ("displacement", ABLATIONS["displacement"], None),
        ("no_augment", ABLATIONS["no_augment"], None),
        ("identity", "Baseline: identity (no deformation)", "identity"),
        ("pca", "Baseline: PCA of training displacements", "PCA"))


@dataclass
class EvalConfig:
    """data: dataset folder; split of the manifest or of split_file; pairs_per_category: instances per
    category (None: all); checkpoint: NeuROK's (None: the shipped default); ablations: {"displacement"
    | "no_augment": checkpoint path}; seed: instance, pose, sample and IK seeds; metric_samples: per
    shape in metrics_in_frame; target_samples: TARGET samples the methods see; pca_cache: folder of
    the PCA subspace cache (None: no cache); random_heading: turn each pair (SOURCE and TARGET
    alike) about the up axis by a seeded random angle, as a scan at an unknown heading; partial_view:
    the methods see only the TARGET samples visible from one seeded camera, and every fit uses the
    one-sided objective (IKConfig.partial); fits: every NeuROK-type row predicts the vertex mean of
    this many fits (fit_ensemble; 1: the single fit); skip_rows: keys
    of ROWS left out (not "neurok", the reference of the paired table); reuse: {record_key: record} of
    earlier runs with this protocol (record_reuse.index_records), taken instead of fitted again after
    each row's first reused pair reproduces; reuse_sources: those runs, named in the report; command:
    shown in the report."""

    data: str | Path
    split: str = "test"
    split_file: str | Path | None = None
    pairs_per_category: int | None = None
    checkpoint: str | Path | None = None
    ablations: dict = field(default_factory=dict)
    seed: int = 0
    device: str = "cpu"
    metric_samples: int = 100_000
    target_samples: int = 2048
    ik: IKConfig = IKConfig()
    fits: int = 1
    pca: PCAConfig = PCAConfig()
    pca_cache: str | Path | None = DEFAULT_PCA_CACHE
    random_heading: bool = False
    partial_view: bool = False
    skip_rows: tuple[str, ...] = ()
    reuse: dict = field(default_factory=dict)
    reuse_sources: tuple[str, ...] = ()
    progress: bool = True
    command: str = ""


@dataclass
class EvalResult:
    records: list[dict]
    markdown: str
    summary: dict
    checkpoints: list[dict]
    notes: list[str]
    seconds: float

    def to_json(self) -> dict:
        return {"summary": self.summary, "checkpoints": self.checkpoints, "notes": self.notes,
                "seconds": self.seconds, "records": self.records}


def checkpoint_facts(role: str, path, payload: dict) -> dict:
    config = payload.get("config", {})
    return {"role": role, "path": str(path), "step": int(payload.get("step", -1)),
            "parameter_count": int(payload.get("parameter_count", 0)),
            "output": config.get("model", {}).get("output", "?"),
            "augment": bool(config.get("data", {}).get("augment", True)),
            "metrics": dict(payload.get("metrics", {})), "dataset": dict(payload.get("dataset", {}))}


def build_methods(config: EvalConfig, train_files: list[str]) -> tuple[list[Method], list[dict], list[str], dict]:
    """(methods in table order, checkpoint facts, notes, PCA facts)."""
    unknown = sorted(set(config.ablations) - set(ABLATIONS))
    if unknown:
        raise NeurokInputError(f"unknown ablation(s) {unknown}; expected {sorted(ABLATIONS)}")
    skippable = [key for key, _, _ in ROWS if key != "neurok"]
    unknown = sorted(set(config.skip_rows) - set(skippable))
    if unknown:
        raise NeurokInputError(f"cannot skip row(s) {unknown}; rows that can be skipped: {skippable}")
    labels = {key: label for key, label, _ in ROWS}
    ik = replace(config.ik, seed=config.seed, partial=config.partial_view)
    encoding = EncodingConfig(seed=config.seed)
    methods: list[Method] = []
    checkpoints, notes = [], []
    path = Path(config.checkpoint) if config.checkpoint else DEFAULT_CHECKPOINT
    model, payload = load_default_model(path, device=config.device)
    sharing = [name for key, name in (("no_subspace", "no-active-subspace"), ("unanchored", "no-rest-anchoring"))
               if key not in config.skip_rows]
    role = "NeuROK" + (f", {' and '.join(sharing)} ablation{'s' if len(sharing) > 1 else ''}" if sharing else "")
    checkpoints.append(checkpoint_facts(role, path, payload))
    methods.append(NeuROKMethod("neurok", labels["neurok"], "default checkpoint, active subspace, fit_pose",
                                model, encoding, ik, config.fits))
    methods.append(NeuROKMethod("no_subspace", labels["no_subspace"],
                                "default checkpoint, EncodingConfig(reduce=False), fit_pose",
                                model, replace(encoding, reduce=False), ik, config.fits))
    methods.append(NeuROKMethod("unanchored", labels["unanchored"],
                                "default checkpoint, EncodingConfig(anchor_rest=False), fit_pose",
                                model, replace(encoding, anchor_rest=False), ik, config.fits))
    expected_output = {"displacement": "displacement", "no_augment": None}
    for key in ABLATIONS:
        if key in config.skip_rows:
            continue  # noted below, checkpoint not loaded
        if key not in config.ablations:
            notes.append(f"Row \"{labels[key]}\" skipped: no checkpoint given "
                         f"(--ablation-checkpoints {key}=PATH).")
            continue
        ablation_model, ablation_payload = load_default_model(config.ablations[key], device=config.device)
        facts = checkpoint_facts(labels[key], config.ablations[key], ablation_payload)
        checkpoints.append(facts)
        if expected_output[key] and facts["output"] != expected_output[key]:
            notes.append(f"Warning: the {key} checkpoint's output is {facts['output']!r}, "
                         f"not {expected_output[key]!r}.")
        if key == "no_augment" and facts["augment"]:
            notes.append("Warning: the no_augment checkpoint was trained with augmentation on.")
        methods.append(NeuROKMethod(key, labels[key], f"{key} checkpoint, active subspace, fit_pose",
                                    ablation_model, encoding, ik, config.fits))
    methods.append(IdentityMethod("identity", labels["identity"], "prediction = SOURCE"))
    subspace, cache_file, cached = load_or_fit_subspace(config.data, train_files, replace(config.pca, seed=config.seed),
                                                        config.pca_cache, config.progress)
    pca_facts = dict(subspace.facts, cache_file=str(cache_file) if cache_file else None, from_cache=cached,
                     explained=[float(e) for e in subspace.explained])
    methods.append(PCAMethod("pca", labels["pca"], "PCA subspace of training displacements, same IK budget",
                             subspace, ik))
    notes += [f"Row \"{labels[key]}\" skipped (--skip-rows)." for key in skippable if key in config.skip_rows]
    methods = [m for m in methods if m.key not in config.skip_rows]
    return methods, checkpoints, notes, pca_facts


def evaluate_pair(methods: list[Method], root: Path, file_name: str, config: EvalConfig,
                  spot_checks: dict) -> list[dict]:
    """One record per method for the pose pair of `file_name`. A record in config.reuse is taken as it is
    once its row is in spot_checks ({row key: (file, metric_gap)}); a row's first reused record is
    fitted again instead, must reproduce (else NeurokInputError), and enters spot_checks."""
    instance = load_instance(root / file_name)
    pair = pose_pair(file_name, instance, config.seed)
    source, target, faces = pair_meshes(instance, pair)
    if config.random_heading:
        turn = pair_heading(file_name, config.seed)
        source, target = source @ turn.T, target @ turn.T
    observed = target_samples(target, faces, config.seed, file_name, config.target_samples, config.partial_view)
    transform = NormalisingTransform.from_vertices(source)
    records = []
    for method in methods:
        stored = config.reuse.get(record_key({"method": method.key, **pair.to_dict()}))
        if stored is not None and method.key in spot_checks:
            records.append(stored)
            continue
        record = {"method": method.key, "label": method.label, **pair.to_dict(), "kind": instance.kind,
                  "num_vertices": instance.num_vertices, "num_faces": len(faces), "chamfer_l1": None,
                  "chamfer_l2": None, "iou": None, "ik_seconds": None, "encode_seconds": None, "k": None,
                  "k_q": None, "loss": None, "error": None}
        try:
            prediction = method.predict(source, faces, observed)
            metrics = metrics_in_frame((prediction.vertices, faces), (target, faces), transform,
                                       config.metric_samples, DEFAULT_SEED)
            record.update(metrics, ik_seconds=prediction.ik_seconds, encode_seconds=prediction.encode_seconds,
                          **{k: prediction.extras.get(k) for k in ("k", "k_q", "loss")})
        except NeurokInputError as exc:
            record["error"] = str(exc).splitlines()[0]
        record = {k: finite_or_none(v) for k, v in record.items()}
        if stored is not None:
            if not reproduces(stored, record):
                raise NeurokInputError(
                    f"--reuse-records: row {method.key}, pair {file_name}: fitted again here it gives Chamfer-L1 "
                    f"{record['chamfer_l1']} / IoU {record['iou']} against the stored {stored['chamfer_l1']} / "
                    f"{stored['iou']}; the earlier run used another checkpoint, dataset or code")
            spot_checks[method.key] = (file_name, metric_gap(stored, record))
        records.append(record)
    return records


def run_evaluation(config: EvalConfig, after_pair=None) -> EvalResult:
    """after_pair(records so far): called after each pair, e.g. to save them as the run goes."""
    started = time.perf_counter()
    root = Path(config.data)
    if not root.is_dir():
        raise NeurokInputError(f"{root}: not a dataset folder")
    files = select_files(split_files(root, config.split, config.split_file), config.pairs_per_category, config.seed)
    if not files:
        raise NeurokInputError(f"split {config.split!r} of {config.split_file or root / 'manifest.json'} is empty")
    missing = [f for f in files if not (root / f).is_file()]
    if missing:
        raise NeurokInputError(f"{root}: {len(missing)} instance file(s) of split {config.split!r} missing, "
                               f"e.g. {missing[0]}")
    train_files = split_files(root, "train", config.split_file)
    methods, checkpoints, notes, pca_facts = build_methods(config, train_files)
    records: list[dict] = []
    spot_checks: dict = {}
    iterator = files
    if config.progress:
        from tqdm import tqdm
        iterator = tqdm(files, desc="neurok eval", unit="pair")
    for file_name in iterator:
        if config.progress:
            iterator.set_postfix_str(file_name)
        records.extend(evaluate_pair(methods, root, file_name, config, spot_checks))
        if after_pair is not None:
            after_pair(records)
    seconds = time.perf_counter() - started
    if config.reuse:
        notes.append(reuse_note(methods, records, config, spot_checks))
    summary = {m.key: report.summarise([r for r in records if r["method"] == m.key]) for m in methods}
    summary = {k: {name: finite_or_none(v) for name, v in s.items()} for k, s in summary.items()}
    trained = set(checkpoints[0]["dataset"].get("train_categories", []))
    unseen = {r["category"] for r in records} - trained if trained else set()
    markdown = render_markdown(config, methods, records, checkpoints, notes, pca_facts, seconds, unseen)
    return EvalResult(records, markdown, summary, checkpoints, notes + [f"PCA: {pca_facts}"], seconds)


def reuse_note(methods: list[Method], records: list[dict], config: EvalConfig, spot_checks: dict) -> str:
    """One line for the report: how many records were reused, from which runs, and each reused row's
    spot check."""
    labels = {m.key: m.label for m in methods}
    reused = sum(1 for r in records if r["method"] in spot_checks and config.reuse.get(record_key(r)) is r)
    checks = "; ".join(f"{labels[key]} on `{file}` (Chamfer-L1 within {gaps['chamfer_l1']:.1e}, IoU within "
                       f"{gaps['iou']:.1e})" for key, (file, gaps) in spot_checks.items())
    return (f"Reused (`--reuse-records`): {reused} of {len(records)} records, taken from "
            f"{'; '.join(config.reuse_sources) or 'earlier runs'}; their IK and encoding seconds are those "
            f"runs'. Each row with reused records was fitted again here on its first such pair and reproduced "
            f"the stored record: {checks or 'no row had reusable records'}.")


def render_markdown(config: EvalConfig, methods: list[Method], records: list[dict], checkpoints: list[dict],
                    notes: list[str], pca_facts: dict, seconds: float, unseen: set[str]) -> str:
    ik = config.ik
    pairs = len({r["file"] for r in records})
    categories = len({r["category"] for r in records})
    split_source = f"`{config.split_file}`" if config.split_file else "the dataset manifest"
    threads = torch.get_num_threads()
    chosen = ("all instances" if config.pairs_per_category is None
              else f"up to {config.pairs_per_category} per category")
    lines = [f"# NeuROK evaluation: pose fitting on the `{config.split}` split", "",
             "Generated by `neurok eval` (nothing in this file is written by hand):", "",
             "```", config.command or "neurok eval", "```", "",
             f"- Data: `{config.data}`, split `{config.split}` from {split_source}: {pairs} pose pairs in "
             f"{categories} categories ({chosen}), seed {config.seed}.",
             f"- Run: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
             f"{seconds / 60:.1f} min on {platform.machine()} with {os.cpu_count()} CPU cores, "
             f"{threads} torch thread{'s' if threads != 1 else ''}, device {config.device}, torch {torch.__version__}.",
             "", "## Checkpoints", ""]
    lines += report.checkpoint_lines(checkpoints)
    if unseen:
        lines += ["", f"Categories evaluated here that the NeuROK checkpoint never saw in training: "
                      f"{', '.join(sorted(unseen))} (marked \"unseen\" below)."]
    lines += ["", "## Protocol", "",
              "- Pairs: per category of the split, up to N instances chosen by a seeded permutation; per "
              "instance one pair of distinct poses (a, b) among its rest pose and frames, drawn with the seed. "
              "SOURCE = pose a (vertices and faces), TARGET = pose b."
              + (" Both are turned about the up axis (z) by one seeded uniform random angle per pair "
                 "(`--random-heading`: an object scanned standing on a table at an unknown heading); the "
                 "dataset's own poses stand upright at a fixed heading per category; training with "
                 "augmentation turns them."
                 if config.random_heading else ""),
              f"- Every method sees SOURCE's mesh and only {config.target_samples} area-uniform surface samples "
              f"of TARGET (no vertices, no correspondence), and predicts SOURCE's vertices moved, in SOURCE's "
              f"vertex order."
              + (" **Partial view** (`--partial-view`): only samples visible from one seeded camera (two "
                 "bounding-box diagonals from TARGET's centre, uniform azimuth, 15-45 degrees above the "
                 "horizon; ray-cast visibility), as one depth image; every fit then minimises the one-sided "
                 "Chamfer from those points, and the rest check uses only their distance to the decoded "
                 "surface." if config.partial_view else ""),
              f"- Score: `metrics_in_frame(prediction, TARGET, SOURCE's normalising transform)` with "
              f"{config.metric_samples:,} samples (Chamfer-L1 / Chamfer-L2 on area-uniform surface samples, "
              f"volumetric IoU by generalised winding number), both shapes normalised by SOURCE's bounding box "
              f"(longest side 1). IoU is undefined (NaN) where TARGET encloses no volume (none of "
              f"{config.metric_samples:,} uniform points of its own padded box has a winding number above "
              f"1/2: a flat sheet), decided on TARGET alone, so for every method alike; a curled open "
              f"sheet such as cloth encloses points only in a thin layer along it, so its IoU is a number that "
              f"measures that layer (the line 'IoU without the cloth pairs' leaves them out). The IoU column "
              f"is the mean over the pairs where it is defined, their count in parentheses.",
              f"- NeuROK rows: encode SOURCE (prior mean; active subspace unless stated), then `fit_pose`: "
              f"{ik.starts} starts (as in `fit_pose`: the SOURCE pose itself, then the best by the objective "
              f"of the prior mean, prior draws"
              + (" and the posterior bank's motions z_rest + offset of the nearest training shapes, when the "
                 "checkpoint has a bank; the q stage then runs in the span of the subspace and those motions"
                 if ik.bank_starts else "") + "), "
              f"{ik.q_steps} Adam steps in q at {ik.q_rate}"
              + (f" (after {ik.q_prune_after} of them only the {ik.q_keep} starts with the lowest objective so "
                 f"far go on; the PCA baseline alike)" if 0 < ik.q_keep < ik.starts and ik.q_prune_after < ik.q_steps
                 else "")
              + f", then {ik.z_steps} steps in z at {ik.z_rate}, Chamfer-L2 on {ik.points} decoded "
              f"SOURCE samples against the TARGET samples"
              + (f" (a fresh set of them at each evaluation of the objective, cycling through {ik.sample_sets} "
                 f"seeded sets; the PCA baseline alike)" if ik.sample_sets > 1 else " (one fixed set)")
              + f", prior weight {ik.prior_weight:g}"
              + (f", the {ik.trim:g} fraction of TARGET samples farthest from the decoded shape left out of the "
                 f"objective and the rest check (the PCA baseline alike)" if ik.trim > 0 else "")
              + (f"; a SOURCE mesh of several connected pieces is fitted as rigid pieces (the objective adds "
                 f"{ik.rigidity_weight:g} times the pieces' rigidity residual, the mean squared distance of the "
                 f"decoded samples from each piece's best rigid motion, and the prediction moves every piece by "
                 f"its best rigid motion; the PCA baseline alike)" if ik.rigid_pieces else "")
              + (f"; then piece registration: the groups of pieces the fit moves alike (within "
                 f"{ik.piece_tolerance:g} RMS) each take the rigid motion that best matches the TARGET samples "
                 f"({ik.piece_steps} steps of symmetric ICP from {4 * ik.points} samples of the fit), kept when "
                 f"that lowers the surface error below the fit's (the PCA baseline alike)"
                 if ik.rigid_pieces and ik.piece_steps > 0 else "")
              + (f"; then link assignment: every group takes the motion the TARGET samples support among "
                 f"rest, its own and the other groups' (rest first, then a shared motion, when within "
                 f"{100 * ik.piece_link_tolerance:g}% of the lowest surface error; the PCA baseline alike)"
                 if ik.rigid_pieces and ik.piece_steps > 0 and ik.piece_links else "")
              + (f"; then the rest check: the fit is kept only if its surface error (TARGET samples to the "
                 f"decoded mesh surface, plus fresh decoded samples to TARGET) is more than "
                 f"{100 * ik.rest_margin:g}% below that of SOURCE itself (q = 0), else q = 0 is returned"
                 + (f" unless the observation differs from SOURCE (its error above {FALLBACK_GAP_RATIO:g} "
                    "sampling gaps) and a second fit in the whole latent space (A = I) wins the same check"
                    if ik.full_space_fallback else "")
                 if ik.rest_check else "") + ". "
              + (f"**An ensemble of {config.fits} fits** (`--fits {config.fits}`): every NeuROK-type row runs this "
                 f"fit {config.fits} times, fit j from its own encoding samples and starts (seeds + j; fit 0 "
                 f"is the single fit), and predicts the mean of their decoded vertices (`fit_ensemble`). "
                 if config.fits > 1 else "")
              + f"\"IK seconds\" is the fit alone{' (all fits)' if config.fits > 1 else ''}; encoding is listed "
              f"below the table.",
              f"- PCA baseline: displacement fields of {pca_facts['config']['num_pairs']} seeded training pairs "
              f"(train split), each in its M0's normalised frame, splatted onto a "
              f"{pca_facts['config']['resolution']}^3 grid over [-{pca_facts['config']['extent']}, "
              f"{pca_facts['config']['extent']}]^3 (inverse-distance weights of the "
              f"{pca_facts['config']['neighbours']} nearest of {pca_facts['config']['samples']} M0 surface "
              f"samples); PCA keeps the mean and {len(pca_facts['explained'])} components "
              f"({100 * sum(pca_facts['explained']):.1f}% of the variance). For a pair, SOURCE moves by the "
              f"trilinear interpolation of mean + components c; c is fitted like NeuROK's q: same sample "
              f"count, Chamfer-L2 objective, prior weight, {ik.starts} starts (c = 0, the c closest to no "
              f"displacement, draws from N(0, I) in units of each component's standard deviation), "
              f"{ik.q_steps} + {ik.z_steps} Adam steps at {ik.q_rate} and {ik.z_rate} (no rest check).",
              "- Identity baseline: prediction = SOURCE.",
              "", "## Results", ""]
    lines += report.main_table([(m.key, m.label) for m in methods], records)
    lines.append("")
    for m in methods:
        s = report.summarise([r for r in records if r["method"] == m.key])
        if m.key not in ("identity", "pca") and s["pairs"]:
            lines.append(f"- {m.label}: encoding median {report.fmt_seconds(s['encode_seconds'])} s, "
                         f"mean k_q {report.fmt(s['k_q'], 1)}.")
    solid = [r for r in records if r.get("kind") != "cloth"]
    if len(solid) < len(records):
        cells = []
        for m in methods:
            s = report.summarise([r for r in solid if r["method"] == m.key])
            cells.append(f"{m.label} {report.fmt_iou(s['iou'])} ({s['iou_count']})")
        lines.append("- IoU without the cloth pairs (open sheets: their winding-number IoU measures almost no "
                     "volume and is not meaningful): " + "; ".join(cells) + ".")
    lines += [f"- {note}" for note in notes]
    if any(m.key == "neurok" for m in methods):
        lines += ["", "## Each row against NeuROK, pair by pair", "",
                  "Mean of (row − NeuROK) over the pairs where both are scored, with a 95% bootstrap interval "
                  "(2000 resamples of the pairs); \"better / worse\": pairs where the row beats NeuROK / "
                  "loses to it (lower Chamfer, higher IoU; equal scores, e.g. both SOURCE, count as neither). "
                  "An interval that contains 0 is a tie at this number of pairs.", ""]
        lines += report.paired_table([(m.key, m.label) for m in methods], records)
    lines += ["", report.PAPER_TABLE_1, "", "## Per category (Chamfer-L1 / IoU)", ""]
    lines += report.category_table([(key, short) for key, _, short in ROWS if short], records, unseen)
    lines += ["", "IoU is n/a where it is undefined for every pair of the category (TARGET encloses no volume).", ""]
    errors = [r for r in records if r.get("error")]
    if errors:
        lines += ["## Failures", ""] + [f"- {r['label']}, `{r['file']}`: {r['error']}" for r in errors] + [""]
    return "\n".join(lines) + "\n"
