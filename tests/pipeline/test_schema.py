"""The packed event code (flip7.events.pack/unpack, their array forms, the tables they make)
and the schema version a run is written in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flip7.events import FIELDS, WIDTH, EventKind, pack, unpack
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.simulate import rotated
from pipeline.lake import Lake
from pipeline.run import prepare, record_shard
from pipeline.schema import (
    EVENTS,
    SCHEMA_VERSION,
    event_codes,
    pack_codes,
    pack_events,
    unpack_codes,
    unpack_events,
)
from pipeline.shard import ShardTask, flat_events, game_seed, simulate_shard, task_variant
from pipeline.task import run_shard
from tests.pipeline.helpers import small_plan

events = st.tuples(
    st.integers(0, 31),  # kind
    st.integers(-1, 62),  # player
    st.integers(-1, 62),  # card
    st.integers(-1, 62),  # target
    st.integers(-(1 << 31), (1 << 31) - 1),  # value
)


@given(st.lists(events, min_size=1, max_size=50))
def test_pack_round_trips_and_the_array_forms_agree(rows: list[tuple[int, ...]]) -> None:
    """unpack(pack(e)) == e, and pack_codes/unpack_codes do the same to columns."""
    codes = [pack(*row) for row in rows]
    assert [unpack(c) for c in codes] == rows
    columns = {name: np.array([r[i] for r in rows]) for i, name in enumerate(FIELDS)}
    packed = pack_codes(columns)
    assert packed.tolist() == codes
    back = unpack_codes(packed)
    assert [tuple(int(back[f][i]) for f in FIELDS) for i in range(len(rows))] == rows


@pytest.mark.parametrize(
    ("event", "field"),
    [
        ((32, 0, 0, 0, 0), "kind"),
        ((1, 63, 0, 0, 0), "player"),
        ((1, 0, -2, 0, 0), "card"),
        ((1, 0, 0, 63, 0), "target"),
        ((1, 0, 0, 0, 1 << 31), "value"),
    ],
)
def test_a_field_out_of_range_is_refused_by_name(event: tuple[int, ...], field: str) -> None:
    """A field that does not fit its bits is a ValueError naming it, never a silent wrap."""
    with pytest.raises(ValueError, match=field):
        pack(*event)
    with pytest.raises(ValueError, match=field):
        pack_codes({name: np.array([v]) for name, v in zip(FIELDS, event, strict=True)})


def test_unpack_events_gives_the_engine_columns_and_pack_events_inverts_it() -> None:
    """A shard's events table unpacks to kind..value and packs back to the same table."""
    task = ShardTask(
        "t", 0, 0, 0, ("ev", "sum:20", "bust:0.25"), "3.1", "classic", 7, True, 0, 0, 5
    )
    tables = simulate_shard(task, engine="reference")
    table = tables["events"]
    readable = unpack_events(table, tables["rounds"])
    assert readable.column_names == ["game", "round", "seq", *FIELDS]
    assert readable.column("kind").to_pylist()[0] == 0  # every game opens with ROUND_START
    assert pack_events(readable).equals(table)
    assert pack_events(readable).schema == EVENTS
    with pytest.raises(ValueError, match="code"):
        unpack_events(readable, tables["rounds"])


@settings(max_examples=25, deadline=None)
@given(
    variant=st.sampled_from(["classic", "vengeance", "vengeance(brutal=1)"]),
    players=st.integers(1, 8),
    seed=st.integers(0, 1 << 40),
    games=st.integers(1, 6),
)
def test_the_stored_events_give_back_every_event_of_the_engine(
    variant: str, players: int, seed: int, games: int
) -> None:
    """The events table leaves the round scores out and folds HITs; with the rounds table it
    gives back every event the engine emitted, in order, with its round and seq."""
    lineup = tuple(["ev", "sum:20", "bust:0.25", "count:4"][i % 4] for i in range(players))
    task = ShardTask("t", 0, 0, 0, lineup, "3.1", variant, seed, True, 0, 0, games)
    tables = simulate_shard(task, engine="reference")
    base = parse_policies(list(lineup))
    flat: list[int] = []
    counts = []
    for i in range(games):
        seats = rotated(base, i)
        result = (
            task_variant(task).new_engine(parse_ruleset("3.1"), seats, game_seed(seed, 0, i)).run()
        )
        flat += result.events
        counts.append(len(result.events) // WIDTH)
    game, rnd, seq, code = flat_events(flat, counts, 0)
    back = event_codes(tables["events"], tables["rounds"])
    assert back["code"].tolist() == code.tolist()
    assert back["seq"].tolist() == seq.tolist()
    assert back["round"].tolist() == rnd.tolist()
    assert back["game"].tolist() == game.tolist()
    stored = tables["events"].column("codes").combine_chunks().flatten().to_numpy()
    assert not ((stored & 31) == EventKind.ROUND_SCORE).any()


def test_events_that_do_not_fit_their_rounds_are_refused() -> None:
    """event_codes refuses a rounds table of other games or rounds instead of guessing."""
    task = ShardTask("t", 0, 0, 0, ("ev", "sum:20"), "3.1", "classic", 3, True, 0, 0, 4)
    tables = simulate_shard(task, engine="reference")
    rounds = tables["rounds"]
    with pytest.raises(ValueError, match="rounds"):
        event_codes(tables["events"], rounds.slice(0, rounds.num_rows - 2))


def test_resuming_a_run_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    """A run begun by a flip7 writing another schema cannot be resumed into a mixed lake."""
    plan = small_plan()
    lake = Lake.open(str(tmp_path))
    manifest, todo = prepare(lake, plan, resume=True, overwrite=False)
    record_shard(manifest, todo[0], run_shard(todo[0], lake.uri))
    manifest["schema_version"] = 2  # as an older flip7 would have written it
    lake.write_manifest(manifest)
    with pytest.raises(ValueError, match=r"schema v2.*`flip7 warehouse upgrade t --data "):
        prepare(lake, plan, resume=True, overwrite=False)
    from warehouse.upgrade import upgrade

    assert upgrade(str(tmp_path), "t").new_version == SCHEMA_VERSION  # its files, as they are
    manifest, todo = prepare(lake, plan, resume=True, overwrite=False)
    assert manifest["schema_version"] == SCHEMA_VERSION and len(todo) == len(plan.shards) - 1
