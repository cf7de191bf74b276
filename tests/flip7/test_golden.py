"""Golden transcripts: a few fixed games, event by event, pinned in tests/flip7/golden/.

They change only when the rules or a policy change on purpose (bump flip7.rules.RULES_VERSION
for a rules change). The test only compares. To see what changed, and to rewrite the files:

    python -m tests.flip7.test_golden            # print the diff of every transcript that differs
    python -m tests.flip7.test_golden --regen    # print it and rewrite those files

then review the diff and commit the files saying why they changed. --regen is refused under CI.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from flip7.events import EventLog
from flip7.policies import parse_policies
from flip7.rules import RULES_VERSION, parse_ruleset
from flip7.variants import parse_variant
from tests.conftest import ci_enabled

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    ("classic-3.1-seed1", "3.1", "classic", "ev,bust:0.25,sum:20,endgame", 1),
    ("classic-immediate-seed2", "immediate", "classic", "evc,count:4,bustc:0.3", 2),
    ("classic-legacy-seed3", "legacy", "classic", "sum:25,ev", 3),
    ("vengeance-seed4", "3.1", "vengeance", "ev,bust:0.25,sum:20", 4),
    ("vengeance-brutal-seed5", "3.1", "vengeance(deck=alt,brutal=1)", "evc,endgame,count:4", 5),
]
#: Two scored rows hold x2 and a +N modifier together (round 8: 6, 8, 9, 11, x2 and +8 score
#: 2 x 34 + 8 = 76; doubling the modifier too would give 84), which none of CASES has.
X2_WITH_MODIFIERS = ("classic-x2-modifiers-seed268", "3.1", "classic", "sum:25,count:5,ev", 268)
ALL_CASES = [*CASES, X2_WITH_MODIFIERS]
REGEN = "python -m tests.flip7.test_golden --regen"


def transcript(ruleset: str, variant: str, specs: str, seed: int) -> str:
    lineup = parse_policies(specs)
    engine = parse_variant(variant).new_engine(parse_ruleset(ruleset), lineup, seed)
    result = engine.run()
    names = [f"P{s}:{p.spec}" for s, p in enumerate(lineup)]
    head = f"rules v{RULES_VERSION} ruleset {ruleset} variant {variant} seed {seed}: {specs}"
    vengeance = parse_variant(variant).name == "vengeance"
    lines = [head] + [e.describe(names, vengeance=vengeance) for e in EventLog(result.events)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name, ruleset, variant, specs, seed", ALL_CASES)
def test_golden_transcript(name, ruleset, variant, specs, seed):
    """The game replays exactly as pinned (any rules or shuffle change shows up here)."""
    if os.environ.get("FLIP7_REGEN_GOLDEN"):
        pytest.fail(f"the test no longer rewrites golden files (FLIP7_REGEN_GOLDEN); run {REGEN}")
    path = GOLDEN / f"{name}.txt"
    assert path.exists(), f"missing {path}: create it with {REGEN} and review it"
    assert transcript(ruleset, variant, specs, seed) == path.read_text(), (
        f"{name} differs from its golden file; {REGEN.removesuffix(' --regen')} shows the diff"
    )


def scored_x2_with_modifier(text: str) -> list[str]:
    """The score lines of a transcript whose player held x2 and a +N modifier and scored."""
    found = []
    held: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.startswith("-- round"):
            held = {}
        elif m := re.match(r"(P\d+):\S+ draws (x2|\+\d+) \(", line):
            held.setdefault(m[1], set()).add("x2" if m[2] == "x2" else "+N")
        elif (m := re.match(r"(P\d+):\S+ scores (\d+)$", line)) and int(m[2]) > 0:
            if held.get(m[1]) == {"x2", "+N"}:
                found.append(line)
    return found


def test_a_golden_game_scores_x2_with_modifiers():
    """The pinned x2 game still has scored rows with x2 and +N (a regenerated file that lost
    them would no longer catch a scorer that doubles modifiers: pick another seed then)."""
    name, *_ = X2_WITH_MODIFIERS
    rows = scored_x2_with_modifier((GOLDEN / f"{name}.txt").read_text())
    assert rows, f"{name} has no scored row with x2 and +N any more: choose a seed that has"


def test_regeneration_prints_the_diff_and_rewrites_only_with_regen(tmp_path, capsys, monkeypatch):
    """Without --regen the command prints the diff and exits 1; --regen rewrites the file."""
    monkeypatch.delenv("CI", raising=False)
    name, *game = CASES[2]
    pinned = (GOLDEN / f"{name}.txt").read_text()
    line = next(line for line in pinned.splitlines() if " scores " in line)
    stale_line = line.replace(" scores ", " scored ")
    (tmp_path / f"{name}.txt").write_text(pinned.replace(line, stale_line, 1))
    assert main(["--case", name], golden=tmp_path) == 1
    out = capsys.readouterr().out
    assert f"-{stale_line}" in out.splitlines() and f"+{line}" in out.splitlines()
    assert "1 of 1 golden transcripts differ" in out
    assert stale_line in (tmp_path / f"{name}.txt").read_text()  # only shown, not rewritten
    assert main(["--regen", "--case", name], golden=tmp_path) == 0
    assert (tmp_path / f"{name}.txt").read_text() == transcript(*game) == pinned
    assert main(["--case", name], golden=tmp_path) == 0


def test_regeneration_is_refused_under_ci(tmp_path, capsys, monkeypatch):
    """Under CI --regen writes nothing and says why: a golden file must not be compared with
    a copy of itself made in the same run."""
    monkeypatch.setenv("CI", "true")
    assert main(["--regen"], golden=tmp_path) == 2
    assert "refusing to regenerate golden transcripts under CI" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_old_environment_switch_fails_instead_of_rewriting(monkeypatch):
    """FLIP7_REGEN_GOLDEN, which used to rewrite the file the test then compared, now fails."""
    monkeypatch.setenv("FLIP7_REGEN_GOLDEN", "1")
    with pytest.raises(pytest.fail.Exception, match="no longer rewrites"):
        test_golden_transcript(*CASES[0])


def main(argv: Sequence[str] | None = None, golden: Path = GOLDEN) -> int:
    """Print the diff of each golden transcript that differs; with --regen, rewrite it. Exit 1
    when some differ and were not rewritten, 2 when --regen is refused (CI)."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.flip7.test_golden", description=main.__doc__
    )
    parser.add_argument("--regen", action="store_true", help="rewrite the transcripts that differ")
    names = [c[0] for c in ALL_CASES]
    parser.add_argument(
        "--case", action="append", choices=names, help="only this game (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.regen and ci_enabled():
        print(
            f"refusing to regenerate golden transcripts under CI (CI={os.environ.get('CI')!r}): "
            "regenerate them on purpose on your machine, review the diff, commit it",
            file=sys.stderr,
        )
        return 2
    cases = [c for c in ALL_CASES if not args.case or c[0] in args.case]
    differ = 0
    for name, *game in cases:
        path = golden / f"{name}.txt"
        new = transcript(*game)
        old = path.read_text() if path.exists() else ""
        if new == old:
            continue
        differ += 1
        sys.stdout.writelines(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                f"a/{name}.txt" if old else "/dev/null",
                f"b/{name}.txt",
            )
        )
        if args.regen:
            path.write_text(new)
    state = "rewritten" if args.regen else "run with --regen to rewrite them"
    print(f"{differ} of {len(cases)} golden transcripts differ" + (f" ({state})" if differ else ""))
    return 1 if differ and not args.regen else 0


if __name__ == "__main__":
    raise SystemExit(main())
