"""The settings of a fit (fit_pose, the PCA baseline's fit), one field each, and the values each allows.

Every field's metadata holds "help": what it sets, in its units ("{name}" in it stands for field
name's default). The settings that `neurok ik`, `neurok fit` and `neurok eval` expose also hold "flag",
the option's one name (cli/fit_options.py builds the options from it), and may hold "aliases" (older
spellings, still accepted, not listed in --help), "metavar" and "flag_help". "check" names the values
a field allows (CHECKS): IKConfig refuses others, and so do the options, in one line naming the flag.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

# check name -> (whether a value passes, what the message says it must be)
CHECKS = {
    "positive": (lambda value: value >= 1, "must be a positive integer"),
    "non_negative": (lambda value: value >= 0, "must be >= 0"),
    "finite_non_negative": (lambda value: math.isfinite(value) and value >= 0, "must be a finite number >= 0"),
    "fraction": (lambda value: 0 <= value < 1, "must be in [0, 1)"),
}


def setting(default, text: str, flag: str | None = None, check: str | None = None, metavar: str | None = None,
            aliases: tuple[str, ...] = (), flag_help: str | None = None):
    """A dataclass field with IKConfig's metadata (module docstring); flag_help: the option's help where
    it is not the field's (a --no- flag)."""
    metadata = {"help": text, "flag": flag, "check": check, "metavar": metavar, "aliases": aliases,
                "flag_help": flag_help}
    return field(default=default, metadata={key: value for key, value in metadata.items() if value})


def value_problem(name: str, value) -> str | None:
    """What is wrong with `value` for IKConfig field `name` ("must be >= 0, got -1"), or None."""
    check = IKConfig.__dataclass_fields__[name].metadata.get("check")
    if check is None:
        return None
    passes, requirement = CHECKS[check]
    return None if passes(value) else f"{requirement}, got {value:g}"


@dataclass(frozen=True)
class IKConfig:
    """The settings of fit_pose (kinematics/inverse_kinematics.py); each field's metadata["help"] says what
    it sets. The defaults' evidence is in docs/model.md."""

    points: int = setting(1024, "decoded SOURCE surface samples per start in the objective", check="positive")
    starts: int = setting(8, "starts of the fit: the input pose (q = 0), then the best by the objective of the "
                             "prior mean, prior draws and, with a posterior bank, its motions",
                          "--starts", "positive", "N", ("--ik-starts",))
    q_steps: int = setting(40, "Adam steps of every start in the coordinates q (the active subspace, with the "
                               "bank's motions)", "--q-steps", "non_negative", "N")
    # 80 fit better than 40 on val and test pairs; 160 no better (docs/model.md)
    z_steps: int = setting(80, "Adam steps of the best start in the whole latent space z; 0: none",
                           "--z-steps", "non_negative", "N")
    q_rate: float = setting(0.15, "Adam step size in q")
    z_rate: float = setting(0.1, "Adam step size in z")
    prior_weight: float = setting(1e-6, "w of the objective's prior term 1/2 w |z - mu|^2",
                                  "--prior-weight", "finite_non_negative", "W", ("--ik-prior-weight",))
    rest_check: bool = setting(True, "keep the input pose (q = 0) unless the fit's surface error is lower by "
                                     "rest_margin")
    rest_margin: float = setting(0.1, "relative margin of the rest check")
    full_space_fallback: bool = setting(True, "when the input pose wins the rest check although the observation "
                                              "differs from it, fit again in the whole latent space (A = I)")
    bank_starts: bool = setting(True, "posterior-bank motions join the candidate starts and the q stage's basis")
    partial: bool = setting(False, "the observation shows part of the surface (one depth view): the objective "
                                   "is the one-sided Chamfer from the observed points, and the rest check uses "
                                   "only their distance to the decoded surface")
    trim: float = setting(0.0, "fraction of the observed points farthest from the decoded shape left out of the "
                               "objective and the rest check (outliers: a gripper or a hand in the view; a moving "
                               "part smaller than that fraction may go unseen)", "--trim", "fraction", "F")
    sample_sets: int = setting(16, "seeded sets of decoded SOURCE samples the objective cycles through, the next "
                                   "at each evaluation; 1: one fixed set", "--sample-sets", "positive", "N",
                               ("--ik-sample-sets",))
    # docs/model.md, "Rigid pieces"
    rigid_pieces: bool = setting(True, "a mesh of several connected pieces (an assembly) is fitted as rigid pieces: "
                                       "their rigidity residual joins the objective and each piece moves by its best "
                                       "rigid motion", "--no-rigid-pieces",
                                 flag_help="fit a mesh of several connected pieces as one deforming surface "
                                           "(default: each piece, a part of an assembly, moves rigidly)")
    # chosen on 40 val pairs among 0.1, 0.3, 1 and 3 (docs/model.md)
    rigidity_weight: float = setting(0.3, "weight of the rigid pieces' rigidity residual in the objective",
                                     "--rigidity-weight", "finite_non_negative", "W", ("--ik-rigidity-weight",))
    # +0.029 IoU on 40 val pairs (docs/model.md, "Piece registration")
    piece_steps: int = setting(20, "ICP steps that register each group of rigid pieces on the observation after "
                                   "the fit; 0: none", "--piece-steps", "non_negative", "N", ("--ik-piece-steps",))
    piece_tolerance: float = setting(0.01, "how far apart (normalised units, RMS) two pieces' fitted motions may "
                                           "move them and still be registered as one group",
                                     check="finite_non_negative")
    # +0.028 IoU on 40 val pairs (docs/model.md, "Link assignment")
    piece_links: bool = setting(True, "after the registration, every group of pieces takes rest, its own motion or "
                                      "another group's, whichever the observation supports",
                                "--piece-links", aliases=("--ik-piece-links",))
    piece_link_tolerance: float = setting(0.01, "relative surface error within which link assignment prefers rest "
                                                "and shared motions", check="finite_non_negative")
    # docs/model.md, "Pruned starts"
    q_keep: int = setting(2, "starts that go on after the first {q_prune_after} steps in q, those with the lowest "
                             "objective so far; 0: all", "--keep-starts", "non_negative", "N", ("--ik-keep-starts",))
    q_prune_after: int = setting(10, "steps in q before q_keep starts are kept", check="positive")
    hold_joint_limits: bool = setting(False, "fitted through an articulation's joints, keep each within its "
                                             "limits (ones you trust); otherwise a revolute joint may take any "
                                             "angle and a prismatic one its limits widened by its part's length, "
                                             "as a readout's limits are estimates")
    seed: int = setting(0, "seed of the fit's samples and starts")

    def __post_init__(self):
        for f in fields(self):
            problem = value_problem(f.name, getattr(self, f.name))
            if problem is not None:
                raise ValueError(f"IKConfig.{f.name} {problem}")
