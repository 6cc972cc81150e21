#!/usr/bin/env bash
# Keep scripts/train_stages.sh runs across machines that do not keep /tmp: copy each stage's
# checkpoints, training logs and (for a stage still under way) optimizer sidecars into a folder that
# outlives the machine (a persistent disk; checkpoints/ in the repository is ignored by git), and back.
#
#   scripts/stage_snapshot.sh save OUT_ROOT SNAPSHOT      (e.g. /tmp/fb checkpoints/full_budget_ablations)
#   scripts/stage_snapshot.sh restore SNAPSHOT OUT_ROOT   (then rerun scripts/train_stages.sh OUT_ROOT)
#
# save copies <run>.pt and <run>.pt.log.jsonl of every stage folder (m1 m2 m3) and, where the
# stage's checkpoint is not at its last step, <run>.pt.train-state.pt, so that `--resume` continues
# with the same AdamW moments. A checkpoint and its sidecar are written one after the other while
# training runs; a pair caught between the two writes (different steps) is copied again. RUNS and
# STAGE_STEPS as for scripts/train_stages.sh. A finished stage's sidecar is left out (a later stage
# starts from the weights alone, with --init), and a stage folder already saved at the same step is
# not copied again.
set -euo pipefail
verb=${1:?usage: scripts/stage_snapshot.sh save|restore FROM TO}
FROM=${2:?usage: scripts/stage_snapshot.sh save|restore FROM TO}
TO=${3:?usage: scripts/stage_snapshot.sh save|restore FROM TO}
PYTHON=${PYTHON:-.venv/bin/python}
RUNS=${RUNS:-displacement no_augment}
read -r -a last_steps <<< "${STAGE_STEPS:-4660 2600 11960}"

step_of() {  # step_of CHECKPOINT_OR_SIDECAR: its step, or -1 when it is missing
  [ -f "$1" ] || { echo -1; return; }
  "$PYTHON" -c "import sys, torch; print(torch.load(sys.argv[1], weights_only=True, map_location='cpu')['step'])" "$1"
}

case $verb in
  save)
    for index in 0 1 2; do
      stage=m$((index + 1))
      [ -d "$FROM/$stage" ] || continue
      mkdir -p "$TO/$stage"
      for run in $RUNS; do
        src=$FROM/$stage/$run.pt
        [ -f "$src" ] || continue
        for attempt in 1 2 3 4 5; do
          tmp=$(mktemp -d)
          cp "$src" "$tmp/ckpt.pt"
          [ -f "$src.train-state.pt" ] && cp "$src.train-state.pt" "$tmp/state.pt"
          step=$(step_of "$tmp/ckpt.pt")
          if [ "$step" = "${last_steps[$index]}" ] || [ "$(step_of "$tmp/state.pt")" = "$step" ]; then
            break
          fi
          rm -rf "$tmp"
          tmp=""
          sleep 5
        done
        [ -n "$tmp" ] || { echo "stage_snapshot: $src and its sidecar never agreed on a step" >&2; exit 1; }
        if [ "$(step_of "$TO/$stage/$run.pt")" != "$step" ]; then
          cp "$tmp/ckpt.pt" "$TO/$stage/$run.pt"
          if [ "$step" = "${last_steps[$index]}" ]; then
            rm -f "$TO/$stage/$run.pt.train-state.pt"
          else
            cp "$tmp/state.pt" "$TO/$stage/$run.pt.train-state.pt"
          fi
        fi
        cp "$src.log.jsonl" "$TO/$stage/$run.pt.log.jsonl"
        rm -rf "$tmp"
        echo "stage_snapshot: $stage/$run at step $step"
      done
    done
    ;;
  restore)
    for stage_dir in "$FROM"/m*; do
      [ -d "$stage_dir" ] || continue
      stage=$(basename "$stage_dir")
      mkdir -p "$TO/$stage"
      for run in $RUNS; do
        [ -f "$stage_dir/$run.pt" ] || continue
        if [ "$(step_of "$TO/$stage/$run.pt")" -ge "$(step_of "$stage_dir/$run.pt")" ]; then
          echo "stage_snapshot: $TO/$stage/$run.pt is already as far; kept"
          continue
        fi
        rm -f "$TO/$stage/$run.pt.train-state.pt"
        cp "$stage_dir/$run".pt* "$TO/$stage/"
        echo "stage_snapshot: restored $stage/$run at step $(step_of "$TO/$stage/$run.pt")"
      done
    done
    ;;
  *) echo "usage: scripts/stage_snapshot.sh save|restore FROM TO" >&2; exit 2 ;;
esac
