"""Golden transcripts: a few fixed games, event by event, pinned in tests/flip7/golden/.

They change only when the rules change on purpose (bump flip7.rules.RULES_VERSION then):
regenerate with `FLIP7_REGEN_GOLDEN=1 pytest tests/flip7/test_golden.py` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flip7.events import EventLog
from flip7.policies import parse_policies
from flip7.rules import RULES_VERSION, parse_ruleset
from flip7.variants import parse_variant

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    ("classic-3.1-seed1", "3.1", "classic", "ev,bust:0.25,sum:20,endgame", 1),
    ("classic-immediate-seed2", "immediate", "classic", "evc,count:4,bustc:0.3", 2),
    ("classic-legacy-seed3", "legacy", "classic", "sum:25,ev", 3),
    ("vengeance-seed4", "3.1", "vengeance", "ev,bust:0.25,sum:20", 4),
    ("vengeance-brutal-seed5", "3.1", "vengeance(deck=alt,brutal=1)", "evc,endgame,count:4", 5),
]


def transcript(ruleset: str, variant: str, specs: str, seed: int) -> str:
    lineup = parse_policies(specs)
    engine = parse_variant(variant).new_engine(parse_ruleset(ruleset), lineup, seed)
    result = engine.run()
    names = [f"P{s}:{p.spec}" for s, p in enumerate(lineup)]
    head = f"rules v{RULES_VERSION} ruleset {ruleset} variant {variant} seed {seed}: {specs}"
    lines = [head] + [e.describe(names) for e in EventLog(result.events)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name, ruleset, variant, specs, seed", CASES)
def test_golden_transcript(name, ruleset, variant, specs, seed):
    """The game replays exactly as pinned (any rules or shuffle change shows up here)."""
    path = GOLDEN / f"{name}.txt"
    text = transcript(ruleset, variant, specs, seed)
    if os.environ.get("FLIP7_REGEN_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing {path}: run with FLIP7_REGEN_GOLDEN=1 to create it"
    assert text == path.read_text()
