"""Tournaments of the "With a Vengeance" variant: specs, declared decks, shards and replay."""

from __future__ import annotations

import pytest

from flip7.cards import Card
from pipeline.plan import make_plan
from pipeline.replay import compare, resimulate
from pipeline.schema import unpack_events
from pipeline.shard import ShardTask, simulate_shard
from pipeline.spec import parse_spec

BASE = """
name = "v"
seed = 3
variant = "{variant}"
games = 6
shard_size = 3
{deck}
[[lineups]]
seats = ["ev", "bust:0.25", "sum:20"]
"""


def spec_text(variant: str, deck: str = "") -> str:
    return BASE.format(variant=variant, deck=deck)


def test_vengeance_specs_parse_to_canonical_variants():
    """variant takes the Vengeance options; the plan's shards carry them."""
    spec = parse_spec(spec_text("vengeance( deck=alt, brutal=1 )"))
    assert spec.variant == "vengeance(deck=alt,brutal=1)" and spec.deck == ()
    plan = make_plan(spec)
    assert {t.variant for t in plan.shards} == {"vengeance(deck=alt,brutal=1)"}


def test_a_declared_deck_reaches_the_shards():
    """A [deck] table with variant '...(deck=custom)' is the deck every shard plays."""
    deck = '[deck]\n"1" = 1\n"2" = 2\n"3" = 3\n"12" = 12\n"13" = 13\n"Lucky 13" = 1\n"-4" = 2\nSteal = 2\n'
    spec = parse_spec(spec_text("vengeance(deck=custom)", deck))
    assert spec.deck[Card.MINUS4] == 2 and spec.deck[Card.STEAL] == 2 and sum(spec.deck) == 36
    task = make_plan(spec).shards[0]
    assert task.deck == spec.deck
    tables = simulate_shard(task)
    assert set(unpack_events(tables["events"], tables["rounds"]).column("card").to_pylist()) <= {
        c for c, k in enumerate(spec.deck) if k
    } | {-1}


@pytest.mark.parametrize(
    "variant, deck, message",
    [
        ("revenge", "", "variant: unknown variant 'revenge'; valid: classic, vengeance"),
        (
            "vengeance",
            '[deck]\n"3" = 3\n',
            "deck: a [deck] table needs variant = 'vengeance(deck=custom)'",
        ),
        (
            "vengeance(deck=custom)",
            '[deck]\n"Freeze!" = 3\n',
            "deck: deck 'custom': unknown card 'Freeze!'",
        ),
        (
            "vengeance(deck=custom)",
            "",
            "variant: variant 'vengeance(deck=custom)': deck=custom needs a declared deck",
        ),
        ("vengeance(deck=huge)", "", "unknown deck 'huge'; valid: default, alt, custom"),
        ("classic(brutal=1)", "", "brutal mode exists only in the vengeance variant"),
    ],
)
def test_bad_variants_and_decks_are_refused_by_name(variant, deck, message):
    """A bad variant or deck fails before anything runs, naming the field and what is valid."""
    with pytest.raises(ValueError) as err:
        parse_spec(spec_text(variant, deck))
    assert message in str(err.value)


def test_vengeance_shards_replay_exactly():
    """A Vengeance shard's logged games re-simulate event for event from their seeds."""
    task = ShardTask(
        "v", 0, 0, 0, ("evc", "endgame", "count:4"), "3.1", "vengeance(deck=alt)", 9, True, 0, 0, 3
    )
    tables = simulate_shard(task)
    games = tables["games"].to_pylist()
    events = unpack_events(tables["events"], tables["rounds"])
    for game in sorted({g["game"] for g in games}):
        rows = sorted((g for g in games if g["game"] == game), key=lambda g: g["seat"])
        mask = [g == game for g in events.column("game").to_pylist()]
        logged = events.filter(mask).sort_by("seq")
        flat = [
            v
            for row in zip(
                *(
                    logged.column(c).to_pylist()
                    for c in ("kind", "player", "card", "target", "value")
                ),
                strict=True,
            )
            for v in row
        ]
        replayed = resimulate(
            {
                "policies": [r["policy"] for r in rows],
                "ruleset": "3.1",
                "variant": rows[0]["variant"],
                "seed": rows[0]["seed"],
                "deck": None,
            }
        )
        assert compare(flat, replayed).equal
