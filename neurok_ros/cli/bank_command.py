"""`neurok bank --data DIR --out CKPT`: add a posterior bank to a checkpoint (model/posterior_bank.py)."""
from __future__ import annotations


def register(subparsers) -> None:
    from neurok_ros.cli.model_options import add_model_options

    parser = subparsers.add_parser("bank", help="add the posterior bank (the prior from training posteriors) "
                                                "to a checkpoint")
    parser.add_argument("--data", required=True, help="the checkpoint's dataset folder (its train split is used)")
    parser.add_argument("--out", required=True, help="checkpoint to write (the input with the bank)")
    parser.add_argument("--split-file", help="JSON splits the checkpoint was trained with, if not the manifest's")
    parser.add_argument("--pairs-per-instance", type=int, help="default: config/posterior_bank.yaml")
    parser.add_argument("--neighbours", type=int, help="default: config/posterior_bank.yaml")
    parser.add_argument("--seed", type=int, help="default: config/posterior_bank.yaml")
    parser.add_argument("--refine-steps", type=int, help="Adam steps on each pair's posterior mean "
                        "(its training objective; 0: E_vae's means as they are); default: config/posterior_bank.yaml")
    parser.add_argument("--refine-rate", type=float, help="their step size; default: config/posterior_bank.yaml")
    parser.add_argument("--augment", action="store_true",
                        help="draw the pairs with the run's random rotations and scales (default: off)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    import time

    from neurok_ros.cli.model_options import load_model_from_args
    from neurok_ros.config_files import config_path, load_yaml
    from neurok_ros.kinematics.instance import DEFAULT_CHECKPOINT
    from neurok_ros.model.losses import LossConfig
    from neurok_ros.training.pair_dataset import PairConfig
    from neurok_ros.training.posterior_bank_build import attach_posterior_bank, build_posterior_bank

    defaults = load_yaml(config_path("posterior_bank.yaml"))
    chosen = {name: getattr(args, name) if getattr(args, name) is not None else defaults[name]
              for name in ("pairs_per_instance", "neighbours", "seed", "refine_steps", "refine_rate")}
    started = time.perf_counter()
    model, payload = load_model_from_args(args)
    data = PairConfig.from_dict(payload["config"].get("data"))
    bank = build_posterior_bank(model, data, args.data, batch_size=int(defaults["batch_size"]),
                                split_file=args.split_file, augment=args.augment or bool(defaults["augment"]),
                                progress=not args.no_progress, loss=LossConfig.from_dict(payload["config"].get("loss")),
                                **chosen)
    out = attach_posterior_bank(args.checkpoint or DEFAULT_CHECKPOINT, bank, args.out)
    print(f"neurok bank: {len(bank)} entries from {bank.facts['train_instances']} training instances, "
          f"{bank.neighbours} neighbours per mesh, {time.perf_counter() - started:.0f} s -> {out} "
          f"({out.stat().st_size / 2 ** 20:.1f} MB)")
    if "objective_median" in bank.facts:
        medians = bank.facts["objective_median"]
        print(f"neurok bank: refined posterior means ({bank.facts['refine_steps']} steps): training objective, "
              f"median over pairs, {medians['encoder']:.4g} -> {medians['refined']:.4g}")
    return 0
