"""Which start pruning keeps the fits (docs/model.md, "Pruned starts"): run `neurok eval` with every
batched Adam run of the IK traced (each start's objective at every step; the rows are independent, so
any pruning schedule can be replayed on the trace exactly), then print, per schedule (prune after N
steps, keep K starts), in how many q stages the eventual winner would be dropped and how far the best
kept start's objective would end above the winner's.

    .venv/bin/python scripts/start_pruning_trace.py TRACE.json -- eval --data /tmp/neurok_data \\
        --out /tmp/val.md --split val --pairs-per-category 2 --json /tmp/val.json --device cpu \\
        --metric-samples 50000 --ik-keep-starts 0 --skip-rows no_subspace unanchored displacement no_augment pca
    .venv/bin/python scripts/start_pruning_trace.py TRACE.json   # replay a trace written before
"""
import json
import sys

import numpy as np

SCHEDULES = [(after, keep) for after in (3, 5, 8, 10, 15, 20) for keep in (1, 2, 3, 4)]


def trace_eval(path: str, eval_args: list[str]) -> int:
    """Run `neurok eval_args` with neurok_ros.kinematics.inverse_kinematics.adam_on_rows traced; write
    [{"B", "steps", "losses": (steps + 1, B)}] for every call to path."""
    import neurok_ros.kinematics.inverse_kinematics as ik
    from neurok_ros.cli import main

    original, calls = ik.adam_on_rows, []

    def traced(variable, objective, steps, rate, *args, **kwargs):
        losses = []

        def recorded(v):
            value = objective(v)
            losses.append(value.detach().cpu().double().tolist())
            return value
        result = original(variable, recorded, steps, rate, *args, **kwargs)
        calls.append({"B": int(variable.shape[0]), "steps": steps, "losses": losses})
        return result

    ik.adam_on_rows = traced
    code = main(eval_args)
    with open(path, "w") as f:
        json.dump(calls, f)
    return code


def replay(path: str) -> None:
    """Print each schedule's outcome on the batched calls of a trace (unpruned ones only)."""
    with open(path) as f:
        calls = [c for c in json.load(f) if c["B"] > 1 and all(len(row) == c["B"] for row in c["losses"])]
    bests = [np.minimum.accumulate(np.array(c["losses"]), axis=0) for c in calls]  # (steps + 1, B) each
    spread = []
    for c, best in zip(calls, bests):
        tail = np.array(c["losses"])[-16:, int(best[-1].argmin())]
        spread.append(tail.std() / tail.mean())
    print(f"{len(calls)} batched q stages; the winner's objective over its last 16 steps varies by "
          f"{np.median(spread):.1%} (median relative standard deviation)")
    for after, keep in SCHEDULES:
        r = np.array([best[-1][np.argsort(best[after - 1])[:keep]].min() / best[-1].min() for best in bests])
        print(f"after {after:2d} keep {keep}: winner dropped in {int((r > 1).sum()):2d}/{len(r)}; best kept ends "
              f">1% above it in {int((r > 1.01).sum())}, >5% in {int((r > 1.05).sum())}, worst {r.max():.3f}")


if __name__ == "__main__":
    if "--" in sys.argv:
        split = sys.argv.index("--")
        status = trace_eval(sys.argv[1], sys.argv[split + 1:])
        if status != 0:
            sys.exit(status)
    replay(sys.argv[1])
