#!/usr/bin/env bash
# Train the shipped checkpoint and the models docs/eval.md compares it with, side by side on one
# machine (one GPU holds all four): the default model, a model trained without two whole categories,
# and two ablations (displacement output, no augmentation). Each run has the same wall-clock budget;
# its cosine learning-rate schedule is fitted to that budget.
#
#   scripts/train_release.sh OUT_DIR [MINUTES]        (make train OUT=... MINUTES=...)
#
# Environment: PYTHON (default .venv/bin/python), DATA (an existing dataset folder; default: generate
# config/dataset.yaml into OUT_DIR/data), DEVICE (auto|cpu|cuda), BATCH (pairs per step),
# HOLDOUT (categories kept out of the held-out model's training), INIT_DIR (start each run from
# INIT_DIR/<name>.pt: a second stage), SET (extra --set overrides for every run, space-separated).
# Writes OUT_DIR/{default,holdout,displacement,no_augment}.pt with .log.jsonl and .out beside each;
# default.pt and holdout.pt then get their posterior banks (`neurok bank`).
set -euo pipefail
OUT=${1:?usage: scripts/train_release.sh OUT_DIR [MINUTES]}
MINUTES=${2:-60}
PYTHON=${PYTHON:-.venv/bin/python}
DEVICE=${DEVICE:-auto}
BATCH=${BATCH:-16}
HOLDOUT=${HOLDOUT:-box_lid cloth_corner_lift}
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
  local extra=()
  if [ -n "${INIT_DIR:-}" ]; then extra+=(--init "$INIT_DIR/$name.pt"); fi
  for item in ${SET:-}; do extra+=(--set "$item"); done
  OMP_NUM_THREADS=2 neurok train "${extra[@]}" --data "$DATA" --out "$OUT/$name.pt" --device "$DEVICE" \
    --max-minutes "$MINUTES" --steps 10000000 --batch-size "$BATCH" --workers "$workers" --no-progress \
    "$@" > "$OUT/$name.out" 2>&1 &
}
launch default "$main_workers"
launch holdout "$share" --split-file "$OUT/holdout_split.json"
launch displacement "$share" --set model.output=displacement
launch no_augment "$share" --set data.augment=false
status=0
for job in $(jobs -p); do wait "$job" || status=1; done
tail -n 2 "$OUT"/*.out
# the posterior bank of the models that sample (docs/model.md, "Posterior bank"), written in place
if [ $status -eq 0 ]; then
  neurok bank --data "$DATA" --checkpoint "$OUT/default.pt" --out "$OUT/default.pt" --no-progress || status=1
  neurok bank --data "$DATA" --checkpoint "$OUT/holdout.pt" --out "$OUT/holdout.pt" \
    --split-file "$OUT/holdout_split.json" --no-progress || status=1
fi
exit $status
