"""`neurok eval-soft`: a poked soft body, the latent chart's prediction against MuJoCo flex ground truth
(neurok_ros/evaluation/soft_poke.py)."""
from __future__ import annotations

SCENARIO_NAMES = ("beam", "beam_no_gravity", "blob")  # evaluation/soft_poke.SCENARIOS, without importing mujoco


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval-soft", help="compare a poked soft body's prediction with MuJoCo flex ground truth",
        description="Simulate a procedural soft body (a clamped elastic beam or a free blob) poked by a push, "
                    "once by the latent chart and once as a MuJoCo flex solid from the same mesh, pins, gravity "
                    "and push; report the mean vertex error over the frames against that of no motion.")
    parser.add_argument("--scenario", choices=SCENARIO_NAMES, default="beam")
    parser.add_argument("--stiffness", type=float, help="1/s^2 (default: omega1^2 of the reference)")
    parser.add_argument("--damping", type=float, help="1/s (default: beta omega1^2 when pinned, else 0)")
    parser.add_argument("--pin-stiffness", type=float, help="1/s^2 (default: a clamp, soft_poke.CLAMP_STIFFNESS)")
    parser.add_argument("--points", type=int, dest="simulation_points", help="simulation points")
    parser.add_argument("--seed", type=int, help="surface sampling seed of the prediction")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", help="folder for SCENARIO.json and SCENARIO.png")
    parser.set_defaults(func=run)


def run(args) -> int:
    import json
    from pathlib import Path

    import torch

    from neurok_ros.evaluation.soft_poke import CLAMP_STIFFNESS, compare_soft_poke

    torch.set_num_threads(args.threads)
    extra = {k: v for k, v in (("simulation_points", args.simulation_points), ("seed", args.seed)) if v is not None}
    figure = None
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        figure = Path(args.out) / f"{args.scenario}.png"
    result = compare_soft_poke(args.scenario, stiffness=args.stiffness, damping=args.damping,
                               pin_stiffness=CLAMP_STIFFNESS if args.pin_stiffness is None else args.pin_stiffness,
                               figure=figure, **extra)
    if args.out:
        (Path(args.out) / f"{args.scenario}.json").write_text(json.dumps(result, indent=1))
    brief = {k: result[k] for k in ("scenario", "error_pred", "error_still", "ratio", "passes", "omega1_rad_s",
                                    "stiffness", "damping", "pin_stiffness", "energy_drift", "seconds")}
    print(json.dumps(brief))
    return 0
