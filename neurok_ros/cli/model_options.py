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
    parser.add_argument("--head", help="an articulation head checkpoint (neurok train-articulation): its per-point "
                                       "votes give the parts and joints (default: the learned motions alone)")


def load_head_from_args(args, device):
    """The articulation head of --head, or None."""
    from neurok_ros.model.articulation_head import load_head

    return None if args.head is None else load_head(args.head, device)
