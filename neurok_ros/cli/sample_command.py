"""`neurok sample MESH -n 8 --out sheet.png`: plausible states of MESH drawn from the learned prior."""
from __future__ import annotations


def register(subparsers) -> None:
    from neurok_ros.cli.model_options import add_model_options

    parser = subparsers.add_parser("sample", help="draw states of a mesh from the learned prior (contact sheet)")
    parser.add_argument("mesh", help="mesh file")
    parser.add_argument("-n", "--count", type=int, default=8, help="number of samples (default 8)")
    parser.add_argument("--out", required=True, help="contact sheet (.png)")
    parser.add_argument("--temperature", type=float, default=1.0,
                        help="scale of the draws about the rest latent (bank offsets) or of the N(mu, I) spread")
    parser.add_argument("--pool", type=int, default=64,
                        help="decode this many draws and show the count most different of them "
                             "(default 64; 0: the first count draws as drawn)")
    parser.add_argument("--npz", help="also save the sampled vertices (count, n, 3) and faces here")
    parser.add_argument("--seed", type=int, default=0)
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    import numpy as np

    from neurok_ros.cli.model_options import load_model_from_args
    from neurok_ros.errors import NeurokInputError
    from neurok_ros.geometry.mesh_io import load_mesh
    from neurok_ros.kinematics.diverse_samples import diverse_latents
    from neurok_ros.kinematics.instance import encode_mesh
    from neurok_ros.visualisation.sample_sheet import render_sample_sheet

    if not 1 <= args.count <= 64:
        raise NeurokInputError("--count must be between 1 and 64")
    if not args.temperature > 0:
        raise NeurokInputError("--temperature must be positive")
    if not 0 <= args.pool <= 1024:
        raise NeurokInputError("--pool must be between 0 and 1024")
    V, F = load_mesh(args.mesh)
    model, _ = load_model_from_args(args)
    instance = encode_mesh(model, V, F)
    latents = diverse_latents(instance, args.count, args.pool, args.seed, args.temperature)
    samples = instance.decode(z=latents)
    render_sample_sheet(V, samples, F, args.out)
    if args.npz:
        np.savez_compressed(args.npz, vertices=samples.astype(np.float32), faces=F)
    prior = "the posterior bank" if instance.motion_offsets is not None else "N(mu, I)"
    chosen = f"the {args.count} most different of {args.pool} draws" if args.pool > args.count else \
        f"{args.count} draws"
    print(f"neurok sample: {chosen} from {prior} for {args.mesh} ({len(V)} vertices, k_q {instance.k_q}) "
          f"-> {args.out}")
    return 0
