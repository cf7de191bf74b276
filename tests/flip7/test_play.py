"""flip7 play through stdin, and the game texts play and watch print."""

from __future__ import annotations

import io
import re

import pytest

from flip7.cards import FLIP7_CHOICE, Card
from flip7.cli import main
from flip7.events import Event, EventKind
from flip7.policies import HumanPolicy, parse_policies
from flip7.policies.base import Policy
from flip7.policies.human import LeftGame, render_table
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant

#: A Vengeance game (target 60, seed 3) in which your first Steal offers nine options.
STEAL_GAME = ["--seed", "3", "--variant", "vengeance", "--ruleset", "3.1(target=60)"]
#: Answers that fit any prompt: "2" picks option 2 (a hit prompt asks again), "h" hits.
ANSWERS = "2\nh\n" * 300


def play(capsys, monkeypatch, stdin: str, *argv: str) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["play", *argv])
    return code, capsys.readouterr().out


def test_a_vengeance_steal_is_yours_to_choose(capsys, monkeypatch):
    """Your Steal: the options are listed by name, you pick option 2 (not the bots' pick) and
    the next card move is that steal."""
    code, out = play(capsys, monkeypatch, ANSWERS, *STEAL_GAME)
    assert code == 0
    assert "Your Steal: what do you do?" in out, "this game no longer gives you a Steal"
    block = out.split("Your Steal: what do you do?\n", 1)[1]
    options = re.findall(r"^  (\d+)\) (.+)$", block.split("Your choice", 1)[0], re.M)
    assert len(options) > 2 and options[0][0] == "1"
    picked = options[1][1]
    assert picked.startswith("steal ") and " from P" in picked
    bots = re.search(r"Your choice \[1-\d+, bots would pick (\d+)\]", block)
    assert bots and bots[1] != "2", "the bots would pick option 2 too: choose another option"
    after = block.split("Your choice", 1)[1].splitlines()
    moved = next(x.strip() for x in after if re.search(r"\b(steal|steals) ", x))
    assert moved.endswith("you " + picked)


def test_human_choose_move_plays_the_chosen_option_in_the_engine():
    """Through the engine: each Steal/Swap/Discard you answer is the CARD_MOVED/CARD_DISCARDED
    that follows, and the game asked you (not the bots' logic) at least once where the bots
    would have chosen otherwise."""
    said: list[str] = []
    answers = iter(ANSWERS.splitlines())
    human = HumanPolicy(ask=lambda _: next(answers), say=said.append)
    chosen: list[tuple[int, tuple[int, ...], int, int]] = []
    ask_move = human.choose_move

    def recording(obs, card, options):  # type: ignore[no-untyped-def]
        i = ask_move(obs, card, options)
        chosen.append((card, options[i], i, Policy.choose_move(human, obs, card, options)))
        return i

    human.choose_move = recording  # type: ignore[method-assign]
    variant = parse_variant("vengeance")
    ruleset = parse_ruleset("3.1(target=60)")
    engine = variant.new_engine(ruleset, [human, *parse_policies("ev,bust:0.25,sum:20")], 3)
    events = [Event(EventKind(k), *rest) for k, *rest in _rows(engine.run().events)]
    moves = [
        e
        for e in events
        if e.kind in (EventKind.CARD_MOVED, EventKind.CARD_DISCARDED)
        and not (
            e.kind == EventKind.CARD_DISCARDED and e.value == 1  # Unlucky 7 wipes
        )
    ]
    played = [e for e in events if e.kind == EventKind.ACTION_PLAYED and e.player == 0]
    assert chosen and any(i != bots for *_, i, bots in chosen)
    for card, option, *_ in chosen:
        if card == Card.STEAL:
            victim, c = option
            assert any(
                e.kind == EventKind.CARD_MOVED and (e.player, e.card, e.target) == (victim, c, 0)
                for e in moves
            ), option
    assert any(e.card == Card.STEAL for e in played)


def _script(*answers: str):  # type: ignore[no-untyped-def]
    """An ask function that gives `answers` in turn, whatever the prompt."""
    it = iter(answers)
    return lambda _prompt: next(it)


def _rows(flat: list[int]) -> list[list[int]]:
    return [flat[i : i + 5] for i in range(0, len(flat), 5)]


def test_q_quits_cleanly(capsys, monkeypatch):
    """q at the first prompt: exit 0, a line saying you left, the seed and replay commands."""
    code, out = play(capsys, monkeypatch, "q\n", "--seed", "11")
    assert code == 0
    assert "You left the game in round 1." in out
    assert "seed 11: the same answers replay this game" in out


def test_end_of_input_leaves_the_game(capsys, monkeypatch):
    """EOF is not an error: exit 0 and a line saying the game was left."""
    code, out = play(capsys, monkeypatch, "h\n", "--seed", "11")
    assert code == 0
    assert "The input ended: you left the game in round" in out
    assert "Traceback" not in out


def test_the_seed_is_printed_first_and_last_and_watch_deals_the_same_cards(capsys, monkeypatch):
    """The seed opens and closes the game; `flip7 watch --seed S` with a bot in your seat deals
    the same first cards (the deal comes before any decision)."""
    code, out = play(
        capsys, monkeypatch, "s\n" * 400, "--seed", "21", "--ruleset", "3.1(target=40)"
    )
    assert code == 0
    lines = out.splitlines()
    assert "seed 21:" in lines[0]
    assert lines[-4].startswith("seed 21: ")
    watch = lines[-1].strip()
    assert watch == "flip7 watch --seed 21 --ruleset '3.1(target=40)' -p ev,ev,bust:0.25,sum:20"
    assert main(["watch", "--seed", "21", "--ruleset", "3.1(target=40)", "-p",
                 "ev,ev,bust:0.25,sum:20", "--no-file"]) == 0  # fmt: skip
    watched = capsys.readouterr().out

    def deal(text: str) -> list[str]:
        first = text.split("-- round 2", 1)[0]
        return re.findall(r"draws? (\S+) \(deal\)", first)

    assert deal(out) and deal(out) == deal(watched)
    assert watched.splitlines()[-1].endswith("; seed 21")


def test_texts_speak_to_you_in_play_and_of_them_elsewhere():
    """Second person for your seat, third person for the others."""
    names = ["you", "P1:ev"]
    cases = [
        (Event(EventKind.FREEZE, 0, -1, -1, 12), "you are frozen with 12", "P0 is frozen with 12"),
        (Event(EventKind.DRAW, 0, 7, -1, 1), "you draw 7 (hit)", "P0 draws 7 (hit)"),
        (Event(EventKind.ROUND_SCORE, 0, -1, -1, 20), "you score 20", "P0 scores 20"),
        (Event(EventKind.BUST, 0, 5, -1, -1), "you bust on a duplicate 5", "P0 busts on a duplicate 5"),
        (Event(EventKind.GAME_END, 0, -1, -1, 203), "you win with 203", "P0 wins with 203"),
        (Event(EventKind.FORCED_STAY, 0, -1, -1, 9), "you must stay with 9 (Just One More)", None),
        (Event(EventKind.CARD_MOVED, 1, 9, 0, 0), "you steal 9 from P1:ev", "P0 steals 9 from P1"),
        (Event(EventKind.CARD_DISCARDED, 1, 12, 0, 0), "P1:ev loses 12 (your Discard)", None),
        (Event(EventKind.ACTION_DROPPED, 0, Card.FREEZE, -1, -1), "your Freeze is dropped", None),
        (Event(EventKind.FLIP7_PENALTY, 0, -1, 1, 15), "you give -15 to P1:ev instead of taking the bonus",
         "P0 gives -15 to P1 instead of taking the bonus"),
        (Event(EventKind.HIT, 0, -1, -1, 2), "you hit (The Zero: you must hit)",
         "P0 hits (holds The Zero, must hit)"),
        (Event(EventKind.ROUND_START, 0, -1, -1, 3), "-- round 3, you deal --",
         "-- round 3, dealer P0 --"),
    ]  # fmt: skip
    for event, yours, theirs in cases:
        assert event.describe(names, you=0) == yours
        if theirs is not None:
            assert event.describe() == theirs
    assert Event(EventKind.FREEZE, 1, -1, -1, 3).describe(names, you=0) == "P1:ev is frozen with 3"


def test_vengeance_cards_are_named_in_event_texts():
    """No 'duplicate -1' after a move, Flip Four is not called a Flip Three, The Zero, the Lucky
    13 and the Unlucky 7 by name."""
    bust_after_move = Event(EventKind.BUST, 2, -1, -1, -1).describe()
    assert "-1" not in bust_after_move and "duplicates a number" in bust_after_move
    deferred = Event(EventKind.ACTION_DEFERRED, 0, Card.STEAL, -1, -1).describe()
    assert deferred == "P0 sets Steal aside until the Flip Four is done"
    classic = Event(EventKind.ACTION_DEFERRED, 0, Card.FREEZE, -1, -1).describe()
    assert classic.endswith("until the Flip Three is done")
    assert (
        Event(EventKind.DRAW, 0, 0, -1, 4).describe(vengeance=True)
        == "P0 draws The Zero (Flip Four)"
    )
    assert Event(EventKind.DRAW, 0, 0, -1, 1).describe() == "P0 draws 0 (hit)"
    assert Event(EventKind.BUST, 0, Card.LUCKY_13, -1, -1).describe().endswith("duplicate Lucky 13")


def test_a_vengeance_transcript_names_its_cards(capsys):
    """flip7 watch of a Brutal Vengeance game: Flip Four, The Zero, Unlucky 7, /2 and the -N
    modifiers by name; no 'duplicate -1', no Flip Three."""
    argv = ["watch", "--variant", "vengeance(deck=alt,brutal=1)", "-p", "evc,endgame,count:4"]
    assert main([*argv, "--seed", "5", "--no-file"]) == 0
    out = capsys.readouterr().out
    for words in ["(Flip Four)", "draws The Zero", "Unlucky 7", "gives /2 to", "busts: a card"]:
        assert words in out, words
    assert "duplicate -1" not in out and "Flip Three" not in out and "draws 0 " not in out


def test_tables_stay_aligned_with_a_30_character_policy_name(capsys, monkeypatch):
    """A 30-character spec: the table's status column and the totals line up on every row."""
    spec = "bust:0.25".ljust(30, "0")
    assert len(spec) == 30
    argv = ["--seed", "2", "--ruleset", "3.1(target=60)", "-p", f"ev,{spec}"]
    code, out = play(capsys, monkeypatch, "1\ns\n" * 300, *argv)
    assert code == 0
    rows = [x for x in out.splitlines() if re.match(r"^[* ](you|P\d)", x) and "[" in x]
    assert len(rows) >= 3 and any(spec in r for r in rows)
    assert len({r.index("[") for r in rows}) == 1
    assert len({r.index(" total ") for r in rows}) == 1
    totals = [x for x in out.splitlines() if re.match(r"^ +(you|P\d:\S+) +\d+$", x)]
    assert len(totals) >= 3 and any(spec in x for x in totals)
    assert len({len(x.strip()) for x in totals}) == 1


def test_render_table_aligns_long_names():
    """render_table pads to the longest name, whatever it is."""
    engine = parse_variant("classic").new_engine(
        parse_ruleset("3.1"), parse_policies(["ev", "ev"]), 1
    )
    engine.play_round()
    text = render_table(engine.obs[0], ["you", "P1:" + "x" * 30])
    assert len({line.index("[") for line in text.splitlines()}) == 1


def test_human_answers_every_decision_the_engines_ask():
    """Every decision method is the person's: a Flip 7 choice (Brutal), a modifier receiver, a
    spare Second Chance; q raises LeftGame, EOF too."""
    engine = parse_variant("vengeance(brutal=1)").new_engine(
        parse_ruleset("3.1"), parse_policies(["ev", "ev", "ev"]), 1
    )
    obs = engine.obs[0]
    said: list[str] = []
    human = HumanPolicy(ask=_script("9", "3"), say=said.append, names=["you", "A", "B"])
    assert human.choose_target(obs, FLIP7_CHOICE, [0, 1, 2]) == 2
    assert "  1) +15 for you" in said and "  3) -15 to B" in said
    assert any("Please type a number from 1 to 3" in s for s in said)
    human = HumanPolicy(ask=_script("1"), say=said.append, names=["you", "A", "B"])
    assert human.choose_target(obs, Card.MINUS4, [0, 1, 2]) == 0
    human = HumanPolicy(ask=_script("2"), say=said.append, names=["you", "A", "B"])
    assert human.choose_recipient(obs, [1, 2]) == 2
    human = HumanPolicy(ask=_script("q"), say=said.append)
    with pytest.raises(LeftGame) as left:
        human.hit(obs)
    assert not left.value.eof

    def eof(_: str) -> str:
        raise EOFError

    with pytest.raises(LeftGame) as left:
        HumanPolicy(ask=eof, say=said.append).hit(obs)
    assert left.value.eof


def test_tables_stay_aligned_with_user_policies_of_long_names(capsys, monkeypatch, tmp_path):
    """Three opponents, one a user policy by a long import path (`pkg.module:LongClassName`):
    every row of the table and of the totals lines up, whatever the name lengths."""
    pkg = tmp_path / "longpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "table_policies.py").write_text(
        "from flip7.policies import Policy\n"
        "class AVeryLongPolicyClassNameForTheTable(Policy):\n"
        "    def hit(self, obs):\n"
        "        return obs.nsum[obs.seat] < 15\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    long = "longpkg.table_policies:AVeryLongPolicyClassNameForTheTable"
    argv = ["--seed", "4", "--ruleset", "3.1(target=60)", "-p", f"bust:0.25,sum:24,{long}"]
    code, out = play(capsys, monkeypatch, "1\ns\nh\n" * 300, *argv)
    assert code == 0
    rows = [x for x in out.splitlines() if re.match(r"^[* ](you|P\d)", x) and "[" in x]
    assert len(rows) >= 8 and any(long in r for r in rows) and any("sum:24" in r for r in rows)
    for column in ("[", " total ", " showing "):
        assert len({r.index(column) for r in rows}) == 1, column
    totals = [x for x in out.splitlines() if re.match(r"^ +(you|P\d:\S+) +-?\d+$", x)]
    assert len(totals) >= 8 and any(long in x for x in totals)
    assert len({len(x.strip()) for x in totals}) == 1  # round totals and final: each aligned


def test_render_table_and_totals_align_totals_of_any_width():
    """A total of 1,000 or more (a high target) or below zero (Brutal) keeps the columns."""
    from flip7.cli.games import totals_table

    engine = parse_variant("classic").new_engine(
        parse_ruleset("3.1"), parse_policies(["ev", "ev", "ev"]), 1
    )
    engine.play_round()
    obs = engine.obs[0]
    obs.totals = [1234, 5, -15]
    lines = render_table(obs, ["you", "P1:ev", "P2:ev"]).splitlines()
    assert len({line.index(" showing ") for line in lines}) == 1
    assert len({len(x) for x in totals_table(["you", "P1", "P2:ev"], [12345, 7, -15])}) == 1
