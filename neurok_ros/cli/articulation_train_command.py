"""`neurok train-articulation --out HEAD.pt`: train the articulation head on procedural instances."""
from __future__ import annotations


def register(subparsers) -> None:
    from neurok_ros.cli.model_options import add_model_options

    parser = subparsers.add_parser("train-articulation",
                                   help="train the articulation head (per-point joint votes) on procedural data")
    parser.add_argument("--out", required=True, help="head checkpoint to write (.pt)")
    parser.add_argument("--per-category", type=int, default=60,
                        help="training instances per articulated category, generated in memory (default 60)")
    parser.add_argument("--minutes", type=float, default=30.0, help="training time (default 30)")
    parser.add_argument("--batch", type=int, default=12, help="examples per step (default 12)")
    parser.add_argument("--init", help="continue from this head checkpoint")
    parser.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (cosine decay; default 1e-3)")
    parser.add_argument("--seed", type=int, default=0)
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from neurok_ros.cli.model_options import load_model_from_args
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.training.articulation_training import split_instances, train_articulation_head

    if args.per_category < 1 or args.batch < 1 or not args.minutes > 0:
        raise NeurokInputError("--per-category and --batch must be at least 1, --minutes positive")
    model, _ = load_model_from_args(args)
    train = split_instances("train", args.per_category)
    val = split_instances("val", 3)
    best = train_articulation_head(model, train, val, args.out, minutes=args.minutes, batch_size=args.batch,
                                   lr=args.lr, seed=args.seed, init=args.init)
    print(f"neurok train-articulation: {len(train)} training instances; best val {best} -> {args.out}")
    return 0
