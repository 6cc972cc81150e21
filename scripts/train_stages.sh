#!/usr/bin/env bash
# The shipped model's three training stages for the runs of scripts/train_release.sh, resumable:
# 4,660 steps into OUT_ROOT/m1, then 2,600 steps (warm-up 50) from m1 into m2, then 11,960 steps
# (warm-up 50) from m2 into m3, 64 pairs a step (docs/model.md, "How the shipped checkpoint was
# trained"). Only m3 gets posterior banks. Every stage runs with RESUME=1, so rerunning this script
# after a machine or session went away continues where it stopped; a stage whose checkpoints are all
# at its last step is skipped, and a stage is never started from an unfinished one.
#
#   DEVICE=cpu THREADS=1 RUNS="displacement no_augment" DATA=/tmp/neurok_data \
#     scripts/train_stages.sh /tmp/fb              (two runs side by side on a 2-core CPU, ~10 h)
#   DEVICE=cuda RUNS="default displacement no_augment" scripts/train_stages.sh out/stages
#
# Environment: as scripts/train_release.sh (DEVICE, THREADS, RUNS, DATA, PYTHON, ...); without DATA
# the dataset is generated once into OUT_ROOT/data. SET adds overrides to every stage (a checkpoint
# every 100 steps is always set); STAGE_STEPS="4660 2600 11960" the three stages' steps.
set -euo pipefail
ROOT=${1:?usage: scripts/train_stages.sh OUT_ROOT}
PYTHON=${PYTHON:-.venv/bin/python}
export BATCH=${BATCH:-64} RESUME=1 PYTHON
RUNS=${RUNS:-default holdout displacement no_augment}
export RUNS
read -r steps1 steps2 steps3 <<< "${STAGE_STEPS:-4660 2600 11960}"
here=$(dirname "$0")
if [ -z "${DATA:-}" ]; then
  DATA=$ROOT/data
  [ -f "$DATA/manifest.json" ] || "$PYTHON" -m neurok_ros data generate --out "$DATA" --workers "$(nproc)"
fi
export DATA

checkpoint_has() {  # checkpoint_has DIR STEPS BANK: every run's checkpoint is at STEPS (and has a bank if BANK=1)
  for run in $RUNS; do
    "$PYTHON" -c "import sys, torch; c = torch.load(sys.argv[1], weights_only=True, map_location='cpu'); \
sys.exit(0 if c['step'] == int(sys.argv[2]) and (sys.argv[3] == '0' or 'posterior_bank' in c) else 1)" \
      "$1/$run.pt" "$2" "$3" 2>/dev/null || return 1
  done
}

stage() {  # stage NAME STEPS BANK [INIT_NAME INIT_STEPS]: train ROOT/NAME (from ROOT/INIT_NAME)
  local name=$1 steps=$2 bank=$3 init=${4:-} init_steps=${5:-} extra=""
  if checkpoint_has "$ROOT/$name" "$steps" "$bank"; then
    echo "train_stages: $ROOT/$name is done (step $steps)"
    return 0
  fi
  if [ -n "$init" ]; then
    checkpoint_has "$ROOT/$init" "$init_steps" 0 || { echo "train_stages: $ROOT/$init is not finished" >&2; exit 1; }
    extra="training.warmup_steps=50"
  fi
  # a finished stage without its banks resumes at its last step at once and writes them
  INIT_DIR=${init:+$ROOT/$init} STEPS=$steps BANK=$bank SET="training.checkpoint_every=100 $extra ${SET:-}" \
    "$here/train_release.sh" "$ROOT/$name"
  checkpoint_has "$ROOT/$name" "$steps" "$bank" || { echo "train_stages: $ROOT/$name did not finish" >&2; exit 1; }
}

stage m1 "$steps1" 0
stage m2 "$steps2" 0 m1 "$steps1"
stage m3 "$steps3" 1 m2 "$steps2"
echo "train_stages: done; checkpoints with posterior banks in $ROOT/m3"
