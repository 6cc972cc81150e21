#!/usr/bin/env bash
# Train the shipped checkpoint and the models docs/eval.md compares it with, side by side on one
# machine (one GPU holds all four): the default model, a model trained without two whole categories,
# and two ablations (displacement output, no augmentation). Each run has the same wall-clock budget
# (or, with STEPS, the same number of steps: a matched-budget comparison); its cosine learning-rate
# schedule is fitted to that budget.
#
#   scripts/train_release.sh OUT_DIR [MINUTES]        (make train OUT=... MINUTES=...)
#
# Environment: PYTHON (default .venv/bin/python), DATA (an existing dataset folder; default: generate
# config/dataset.yaml into OUT_DIR/data), DEVICE (auto|cpu|cuda), BATCH (pairs per step),
# HOLDOUT (categories kept out of the held-out model's training), INIT_DIR (start each run from
# INIT_DIR/<name>.pt: a second stage), SET (extra --set overrides for every run, space-separated),
# STEPS (train each run for exactly this many steps; MINUTES is then ignored), RUNS (which of
# default holdout displacement no_augment to train; default: all four), THREADS (torch threads per
# run, default 2), RESUME=1 (continue each run from its last periodic checkpoint in OUT_DIR: a run
# stopped by a machine or session going away picks up where it was; with STEPS), BANK=0 (skip the
# posterior banks: an intermediate stage, whose checkpoints only seed the next).
# Writes OUT_DIR/<run>.pt with .log.jsonl and .out beside each; each then gets its posterior bank
# (`neurok bank`, in place), which the evaluation's NeuROK and ablation rows use.
#
#   the shipped model's three stages for every model, resumable (matched budgets):
#   DEVICE=cuda RUNS="default displacement no_augment" scripts/train_stages.sh out/stages
#   (on a 2-core CPU: DEVICE=cpu THREADS=1 RUNS="displacement no_augment" DATA=..., over sessions)
set -euo pipefail
OUT=${1:?usage: scripts/train_release.sh OUT_DIR [MINUTES]}
MINUTES=${2:-60}
PYTHON=${PYTHON:-.venv/bin/python}
DEVICE=${DEVICE:-auto}
THREADS=${THREADS:-2}
BATCH=${BATCH:-16}
HOLDOUT=${HOLDOUT:-box_lid cloth_corner_lift}
RUNS=${RUNS:-default holdout displacement no_augment}
for run in $RUNS; do
  case $run in default|holdout|displacement|no_augment) ;; *) echo "unknown run '$run' in RUNS" >&2; exit 2 ;; esac
done
if [ -n "${STEPS:-}" ]; then budget=(--steps "$STEPS"); else budget=(--max-minutes "$MINUTES" --steps 10000000); fi
CORES=$(nproc)
mkdir -p "$OUT"
neurok() { "$PYTHON" -m neurok_ros "$@"; }

if [ -z "${DATA:-}" ]; then
  DATA=$OUT/data
  neurok data generate --out "$DATA" --workers "$CORES"
fi
# shellcheck disable=SC2086
neurok data split "$DATA" --out "$OUT/holdout_split.json" --holdout-categories $HOLDOUT

# DataLoader workers: the shipped model gets the largest share of the cores.
share=$(( CORES > 8 ? (CORES - 4) / 4 : 1 ))
main_workers=$(( CORES > 8 ? CORES - 4 - 3 * share : 1 ))
launch() {
  local name=$1 workers=$2; shift 2
  case " $RUNS " in *" $name "*) ;; *) return 0 ;; esac
  local extra=()
  if [ -n "${INIT_DIR:-}" ]; then extra+=(--init "$INIT_DIR/$name.pt"); fi
  if [ "${RESUME:-0}" = 1 ]; then extra+=(--resume); fi
  for item in ${SET:-}; do extra+=(--set "$item"); done
  OMP_NUM_THREADS=$THREADS neurok train "${extra[@]}" --data "$DATA" --out "$OUT/$name.pt" --device "$DEVICE" \
    "${budget[@]}" --batch-size "$BATCH" --workers "$workers" --no-progress \
    "$@" >> "$OUT/$name.out" 2>&1 &
}
launch default "$main_workers"
launch holdout "$share" --split-file "$OUT/holdout_split.json"
launch displacement "$share" --set model.output=displacement
launch no_augment "$share" --set data.augment=false
status=0
for job in $(jobs -p); do wait "$job" || status=1; done
tail -n 2 "$OUT"/*.out
# each model's posterior bank (docs/model.md, "Posterior bank"), written in place
if [ $status -eq 0 ] && [ "${BANK:-1}" != 0 ]; then
  for run in $RUNS; do
    split=()
    if [ "$run" = holdout ]; then split=(--split-file "$OUT/holdout_split.json"); fi
    neurok bank --data "$DATA" --checkpoint "$OUT/$run.pt" --out "$OUT/$run.pt" "${split[@]}" --no-progress || status=1
  done
fi
exit $status
