"""Options shared by the commands that load the NeuROK model (checkpoint, device, threads)."""
from __future__ import annotations


def add_model_options(parser) -> None:
    parser.add_argument("--checkpoint", help="model checkpoint (default: the shipped neurok_default.pt)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")


def load_model_from_args(args):
    """(model, checkpoint dict) for --checkpoint / --device."""
    from neurok_ros.kinematics.instance import load_default_model

    return load_default_model(args.checkpoint, args.device)


def add_head_options(parser) -> None:
    parser.add_argument("--head", default="auto", metavar="auto|none|FILE",
                        help="the articulation head whose per-point votes give the parts and joints, the learned "
                             "motions adding those it leaves still: auto (default) the one shipped with the model "
                             "(none for another --checkpoint), FILE a checkpoint of neurok train-articulation, "
                             "none the learned motions alone")


def load_head_from_args(args, device):
    """The articulation head of --head: "auto", None (none) or the loaded FILE."""
    from neurok_ros.model.articulation_head import load_head

    if args.head in ("auto", "none"):
        return None if args.head == "none" else "auto"
    return load_head(args.head, device)
