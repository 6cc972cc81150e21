"""The fitting options of `neurok ik`, `neurok fit` and `neurok eval` come from IKConfig's fields: one
name each, the same in every command, older spellings still accepted and not listed."""
import re
from dataclasses import fields

import pytest

from neurok_ros.cli import build_parser
from neurok_ros.cli.fit_options import exposed_fields, fit_config, fit_option_words
from neurok_ros.errors import NeurokInputError
from neurok_ros.kinematics.ik_config import IKConfig

pytestmark = pytest.mark.unit

COMMANDS = {"ik": ["ik", "SOURCE", "TARGET"], "fit": ["fit", "MESH", "SCAN"],
            "eval": ["eval", "--data", "DATA", "--out", "OUT"]}
VALUES = {"starts": "3", "q_steps": "7", "z_steps": "0", "prior_weight": "0.001", "trim": "0.25", "sample_sets": "2",
          "rigidity_weight": "0.5", "piece_steps": "4", "piece_links": "off", "q_keep": "0"}


def parsed(command: str, *options: str) -> IKConfig:
    return fit_config(build_parser().parse_args([*COMMANDS[command], *options]), IKConfig())


def test_every_command_takes_every_fitting_option_under_one_name():
    exposed = {f.name for f in exposed_fields()}
    assert exposed == set(VALUES) | {"rigid_pieces"}
    words = [word for f in exposed_fields() if f.name in VALUES for word in (f.metadata["flag"], VALUES[f.name])]
    expected = IKConfig(starts=3, q_steps=7, z_steps=0, prior_weight=0.001, trim=0.25, sample_sets=2,
                        rigidity_weight=0.5, piece_steps=4, piece_links=False, q_keep=0)
    for command in COMMANDS:
        assert parsed(command) == IKConfig()  # nothing given: the command's own settings
        assert parsed(command, *words) == expected
        # without rigid pieces the weight means nothing: 0
        no_pieces = parsed(command, *words, "--no-rigid-pieces")
        assert not no_pieces.rigid_pieces and no_pieces.rigidity_weight == 0.0
        args = build_parser().parse_args([*COMMANDS[command], *words, "--no-rigid-pieces"])
        assert fit_option_words(args) == [*words[:12], "--no-rigid-pieces", *words[12:]]  # field order


def test_the_older_spellings_still_work_and_are_not_listed(capsys):
    older = ["--ik-starts", "3", "--ik-steps", "7", "0", "--ik-prior-weight", "0.001", "--ik-sample-sets", "2",
             "--ik-rigidity-weight", "0.5", "--ik-piece-steps", "4", "--ik-piece-links", "off", "--ik-keep-starts", "0"]
    newer = ["--starts", "3", "--q-steps", "7", "--z-steps", "0", "--prior-weight", "0.001", "--sample-sets", "2",
             "--rigidity-weight", "0.5", "--piece-steps", "4", "--piece-links", "off", "--keep-starts", "0"]
    for command in COMMANDS:
        assert parsed(command, *older) == parsed(command, *newer) != IKConfig()
        words = fit_option_words(build_parser().parse_args([*COMMANDS[command], *older]))
        assert words == newer  # written back under the one name
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        text = capsys.readouterr().out
        assert "--ik-" not in text and all(f.metadata["flag"] in text for f in exposed_fields())


def test_a_value_the_fit_refuses_is_one_line_naming_the_option():
    for options, message in ((["--keep-starts", "-1"], "--keep-starts must be >= 0, got -1"),
                             (["--ik-keep-starts", "-2"], "--keep-starts must be >= 0, got -2"),
                             (["--starts", "0"], "--starts must be a positive integer, got 0"),
                             (["--prior-weight", "nan"], "--prior-weight must be a finite number >= 0, got nan"),
                             (["--trim", "1"], "--trim must be in [0, 1), got 1")):
        for command in COMMANDS:
            with pytest.raises(NeurokInputError) as error:
                parsed(command, *options)
            assert str(error.value) == message
    with pytest.raises(ValueError, match="IKConfig.q_keep must be >= 0, got -1"):
        IKConfig(q_keep=-1)


def test_every_setting_says_what_it_sets_without_dates_or_timings():
    for f in fields(IKConfig):
        text = f.metadata["help"] + f.metadata.get("flag_help", "")
        assert text and not re.search(r"\b20\d\d\b|session|\d+(\.\d+)? ?(s|ms|min)\b", text), f.name
