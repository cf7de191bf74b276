"""Tournament specs: valid ones parse into the intended line-ups, bad ones name the bad field."""

from __future__ import annotations

from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.spec import MAX_PLAYERS, load_spec, parse_spec

EXPERIMENTS = sorted(Path(__file__).resolve().parents[2].joinpath("experiments").glob("*.toml"))

BASE = """
name = "x"
seed = 1
games = 10
"""


def spec_with(lineups: str, head: str = BASE) -> str:
    return head + lineups


def test_mix_expands_to_each_field_size_interleaved() -> None:
    """A mix of k policies fills n seats as mix[s % k], once per field size listed."""
    spec = parse_spec(spec_with('[[lineups]]\nmix = ["ev", "bust:0.25"]\nplayers = [2, 4]\n'))
    (lineup,) = spec.lineups
    assert lineup.layouts == (("ev", "bust:0.25"), ("ev", "bust:0.25", "ev", "bust:0.25"))
    assert (spec.ruleset, spec.variant, spec.rotate) == ("3.1", "classic", True)


def test_seats_and_defaults() -> None:
    """Explicit seats keep their order; per-line-up games override the top-level default."""
    spec = parse_spec(
        spec_with('[[lineups]]\nseats = ["sum:20", "ev", "ev"]\ngames = 7\n').replace(
            "seed = 1", 'seed = 1\nruleset = "legacy(target=150)"\nrotate = false'
        )
    )
    assert spec.lineups[0].layouts == (("sum:20", "ev", "ev"),)
    assert spec.lineups[0].games == 7
    assert spec.ruleset == "legacy(target=150)" and spec.rotate is False


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
def test_shipped_experiments_are_valid(path: Path) -> None:
    """Every spec in experiments/ loads (the demo among them)."""
    assert load_spec(path).lineups


@pytest.mark.parametrize(
    ("text", "field", "hint"),
    [
        (
            spec_with('[[lineups]]\nmix = ["ev", "evv"]\nplayers = [2]\n'),
            "lineups[0].mix[1]",
            "valid:",
        ),
        (spec_with('[[lineups]]\nseats = ["ev", "human"]\n'), "lineups[0].seats[1]", "human"),
        (
            spec_with('[[lineups]]\nmix = ["ev", "bust:0.25"]\nplayers = [3]\n'),
            "lineups[0].players",
            "valid field sizes for this mix: 2, 4",
        ),
        (
            spec_with(f'[[lineups]]\nmix = ["ev"]\nplayers = [{MAX_PLAYERS + 1}]\n'),
            "lineups[0].players",
            f"2 to {MAX_PLAYERS}",
        ),
        (spec_with('[[lineups]]\nseats = ["ev"]\n'), "lineups[0].seats", "impossible field size 1"),
        (spec_with('[[lineups]]\nmix = ["ev"]\n'), "lineups[0].players", "missing"),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\n', head='name = "x"\ngames = 5\n'),
            "seed",
            "missing",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\n', head='name = "x"\nseed = "1"\ngames = 5\n'
            ),
            "seed",
            "expected an integer",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\n', head='name = "x"\nseed = 1\ngames = true\n'
            ),
            "games",
            "expected an integer",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\n', head='name = "x"\nseed = 1\n'),
            "lineups[0].games",
            "missing",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\n', head=BASE + "shard-size = 5\n"),
            "shard-size",
            "unknown field",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\nplayer = 2\n'),
            "lineups[0].player",
            "unknown field",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\n', head=BASE + 'variant = "revenge"\n'),
            "variant",
            "valid: classic, vengeance",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\n', head=BASE + 'ruleset = "3.2"\n'),
            "ruleset",
            "valid: 3.1",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\n', head=BASE + 'ruleset = "3.1(target=40000)"\n'
            ),
            "ruleset",
            "target <=",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\n', head='name = "a/b"\nseed = 1\ngames = 5\n'
            ),
            "name",
            "valid run name",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\nmix = ["ev"]\n'),
            "lineups[0]",
            "exactly one of",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\npair = "a"\n'),
            "lineups[0].pair",
            "no other line-up",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\npair = "a"\n[[lineups]]\nseats = ["evc", "ev"]\npair = "a"\ngames = 3\n'
            ),
            "lineups[1].games",
            "equal games",
        ),
        (BASE, "lineups", "missing"),
        ("name = [", "", "not valid TOML"),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\nrulesets = ["3.1", "legcy"]\n'),
            "lineups[0].rulesets[1]",
            "did you mean 'legacy'?",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\n',
                head=BASE + 'rulesets = ["3.1", "immedate"]\n',
            ),
            "rulesets[1]",
            "did you mean 'immediate'?",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\n',
                head=BASE + 'ruleset = "3.1"\nrulesets = ["legacy"]\n',
            ),
            "rulesets",
            "not both",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\nrulesets = []\n'),
            "lineups[0].rulesets",
            "non-empty list",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\nrulesets = ["3.1", "3.1(target=200)"]\n'),
            "lineups[0].rulesets[1]",
            "already listed",
        ),
        (
            spec_with('[[lineups]]\nseats = ["ev", "ev"]\nruleset = "legacy(target=99999)"\n'),
            "lineups[0].ruleset",
            "target <=",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\n[[lineups]]\nseats = ["ev", "ev"]\n'
                'rulesets = ["legacy", "3.1"]\n'
            ),
            "lineups[1]",
            "the cell 'ev,ev' at 2 players under ruleset 3.1 is already lineups[0]'s",
        ),
        (
            spec_with(
                '[[lineups]]\nseats = ["ev", "ev"]\npair = "a"\n'
                '[[lineups]]\nseats = ["evc", "ev"]\npair = "a"\nruleset = "legacy"\n'
            ),
            "lineups[0].pair",
            "under ruleset 3.1",
        ),
    ],
)
def test_bad_spec_names_the_field(text: str, field: str, hint: str) -> None:
    """Each mistake is refused with the field's name and what would be valid."""
    with pytest.raises(ValueError) as err:
        parse_spec(text)
    message = str(err.value)
    assert message.startswith(field), message
    assert hint in message, message


def test_rulesets_cross_every_line_up_and_a_line_up_may_name_its_own() -> None:
    """A top-level `rulesets` list is every line-up's default, in canonical form; a line-up's
    `ruleset` or `rulesets` replaces it; Spec.rulesets lists them all in spec order."""
    spec = parse_spec(
        spec_with(
            '[[lineups]]\nmix = ["ev"]\nplayers = [2, 4]\n'
            '[[lineups]]\nseats = ["ev", "sum:24"]\nruleset = "legacy(target=250)"\n'
            '[[lineups]]\nseats = ["ev", "bust:0.25"]\nrulesets = ["3.1(bonus=15)", "immediate"]\n',
            head=BASE + 'rulesets = ["immediate", "3.1(target=150)"]\n',
        )
    )
    assert [lu.rulesets for lu in spec.lineups] == [
        ("immediate", "3.1(target=150)"),
        ("legacy(target=250)",),
        ("3.1", "immediate"),
    ]
    assert spec.ruleset == "immediate"
    assert spec.rulesets == ("immediate", "3.1(target=150)", "legacy(target=250)", "3.1")


def test_one_line_up_under_several_rulesets_is_not_a_duplicate_cell() -> None:
    """The same label at one field size is one cell per ruleset; two line-ups with one label may
    share it under different rulesets."""
    spec = parse_spec(
        spec_with(
            '[[lineups]]\nname = "duo"\nseats = ["ev", "ev"]\nruleset = "legacy"\n'
            '[[lineups]]\nname = "duo"\nseats = ["ev", "ev"]\n'
        )
    )
    assert [lu.rulesets for lu in spec.lineups] == [("legacy",), ("3.1",)]


def test_bad_spec_is_refused_before_ray_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flip7 tournament run` on a bad spec exits 2 with a one-line error; nothing is written."""
    import ray

    spec = tmp_path / "bad.toml"
    spec.write_text(spec_with('[[lineups]]\nmix = ["ev", "nope:3"]\nplayers = [2]\n'))
    out = tmp_path / "data"
    code = main(["tournament", "run", str(spec), "--data", str(out), "--no-file"])
    err = capsys.readouterr().err
    assert code == 2
    assert "bad.toml: lineups[0].mix[1]: unknown policy 'nope:3'" in err
    assert not ray.is_initialized()
    assert not out.exists()


def test_missing_spec_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A spec path that does not exist is a one-line error too."""
    code = main(["tournament", "run", str(tmp_path / "none.toml"), "--no-file"])
    assert code == 2
    assert "not found" in capsys.readouterr().err


def test_a_spec_with_three_mistakes_lists_all_three(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run names every mistake: a misspelt field, a bad value, a bad policy in a line-up
    (issue 32, item 10); each on its own line, under one error line; exit 2 before Ray."""
    text = (
        'name = "three"\nseed = 1\ngames = 10\nshard_sise = 5\nrotate = "yes"\n'
        '[[lineups]]\nseats = ["ev", "evv"]\n'
    )
    with pytest.raises(ValueError) as err:
        parse_spec(text)
    problems = err.value.problems  # type: ignore[attr-defined]
    assert [p.split(":")[0] for p in problems] == ["shard_sise", "rotate", "lineups[0].seats[1]"]
    assert str(err.value).startswith("3 problems: (1) shard_sise: unknown field")
    spec = tmp_path / "three.toml"
    spec.write_text(text)
    code = main(["tournament", "run", str(spec), "--data", str(tmp_path / "data"), "--no-file"])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert lines[0] == f"flip7 tournament: error: {spec}: 3 problems:"
    assert lines[1].startswith("  - shard_sise: unknown field (did you mean shard_size?)")
    assert lines[2].startswith("  - rotate: expected true or false")
    assert lines[3].startswith("  - lineups[0].seats[1]: unknown policy 'evv'")
    assert len(lines) == 4
