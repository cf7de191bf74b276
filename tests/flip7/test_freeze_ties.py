"""The `freeze_ties` reading: whom a Freeze goes to when several others are as close to Flip 7."""

from __future__ import annotations

import sys

import pytest

from flip7.cards import Card
from flip7.events import EventKind
from flip7.kernel import choose_engine
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from tests.flip7.helpers import of_kind, stacked_engine


@pytest.mark.parametrize(("spec", "frozen"), [("immediate", 1), ("immediate(freeze_ties=1)", 0)])
def test_freeze_ties_by_points_or_by_turn_order(spec, frozen):
    """Four seats, seat 0 dealt first: 5 to seat 0, 9 to seat 1, then seat 2 is dealt a Freeze
    with nothing in front of it. Seats 0 and 1 are the closest to Flip 7 (one number each;
    seat 3 has none): by points the Freeze goes to seat 1 (9 > 5); read in turn order after
    seat 2 (3, 0, 1), to seat 0."""
    policies = parse_policies("sum:20,sum:20,sum:20,sum:20")
    engine = stacked_engine(policies, [5, 9, int(Card.FREEZE), 7, 3, 4], ruleset=spec)
    engine.play_round()
    played = of_kind(engine, EventKind.ACTION_PLAYED)[0]
    assert (played.player, played.card, played.target) == (2, Card.FREEZE, frozen)


def test_freeze_ties_parses_prints_back_and_runs_on_the_reference_engine():
    """The override prints back; 0 and 1 only; the kernel does not play it, so `auto` falls back
    to the reference engine and says why."""
    r = parse_ruleset("immediate(freeze_ties=1)")
    assert r.freeze_ties == 1 and r.spec == "immediate(freeze_ties=1)"
    assert parse_ruleset(r.spec) == r and parse_ruleset("immediate").freeze_ties == 0
    with pytest.raises(ValueError, match="freeze_ties must be 0 or 1"):
        parse_ruleset("3.1(freeze_ties=2)")
    engine, why = choose_engine("auto", parse_policies("ev,bust:0.25,ev"), r)
    assert engine == "reference" and "freeze_ties" in (why or "")


def test_murch_ppr_script_runs_each_reading(capsys, monkeypatch):
    """experiments/murch_ppr.py (the figures of docs/experiments.md): one line per policy with
    points per round and the frozen rounds' share, under each reading of the Freeze's target."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "experiments" / "murch_ppr.py"
    spec = importlib.util.spec_from_file_location("murch_ppr", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # registered as importing it would: its dataclasses look their module up by name
    monkeypatch.setitem(sys.modules, "murch_ppr", module)
    spec.loader.exec_module(module)
    for freeze in ("flip7", "turn", "threat"):
        module.run(4, 12, 11, freeze)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and all("pts/round" in line and "frozen" in line for line in lines)
    assert {line.split()[1] for line in lines} == {"freeze=flip7", "freeze=turn", "freeze=threat"}
