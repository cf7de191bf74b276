"""lakecontract.codec: the events and rounds files' stored form decodes to exactly the rows the
simulator makes, through a real Parquet file too; random tables round-trip; the writer's codebook
(pipeline.codebook) and numpy's decode to the same rows; and every malformed stored input is a
ValueError that says what is wrong (never an IndexError, a crash or wrong rows)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flip7.events import HIT_SHIFT
from lakecontract import arrow, codec
from pipeline.codebook import index_codes
from pipeline.shard import ShardTask, simulate_shard

TABLES = ("events", "rounds")

#: (id, variant, line-up, games, task options): a shard of each kind the pipeline writes.
SHARDS = [
    ("classic-1", "classic", ("sum:20",), 6, {}),
    ("classic-2", "classic", ("ev", "bust:0.25"), 8, {}),
    ("classic-4", "classic", ("ev", "evc", "sum:20", "count:4"), 8, {}),
    ("classic-8", "classic", ("sum:20", "ev") * 4, 5, {}),
    ("vengeance", "vengeance", ("ev", "evc", "bust:0.25", "sum:20"), 6, {}),
    ("brutal", "vengeance(brutal=1)", ("ev", "sum:20", "count:4"), 6, {}),
    ("alt-deck", "vengeance(deck=alt)", ("endgame", "bustc:0.25"), 6, {}),
    ("reference", "classic", ("ev", "sum:20", "bust:0.25"), 6, {"engine": "reference"}),
    ("reference-vengeance", "vengeance", ("ev", "sum:20"), 5, {"engine": "reference"}),
    ("no-events", "classic", ("ev", "sum:20", "count:4"), 6, {"capture_events": False}),
    (
        "no-events-reference",
        "classic",
        ("ev", "sum:20"),
        5,
        {"capture_events": False, "engine": "reference"},
    ),
    ("empty", "classic", ("ev", "sum:20"), 0, {}),
]


def shard_task(variant: str, lineup: tuple[str, ...], games: int, **options: object) -> ShardTask:
    return ShardTask("c", 0, 0, 0, lineup, "3.1", variant, 17, True, 100, 3, 3 + games, **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=SHARDS, ids=[s[0] for s in SHARDS])
def shard(request: pytest.FixtureRequest) -> tuple[ShardTask, dict, dict]:
    """(task, its logical tables, its stored tables as a shard task writes them)."""
    _, variant, lineup, games, options = request.param
    task = shard_task(variant, lineup, games, **options)
    return task, simulate_shard(task), simulate_shard(task, stored=True)


def decoded(table: str, stored: pa.Table, columns: list[str] | None = None) -> pa.Table:
    return codec.decode(table, stored, stored.schema.metadata, columns)


def assert_rows(got: pa.Table, want: pa.Table) -> None:
    """The same schema (no metadata) and the same rows, exactly."""
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert got.equals(want), (got.slice(0, 3).to_pylist(), want.slice(0, 3).to_pylist())


# --- round trips of real shards ---------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
def test_a_shards_stored_tables_decode_to_its_logical_rows(shard, table: str) -> None:
    """decode(simulate_shard(stored=True)) is simulate_shard()'s table, exactly, one stored row
    a game; the numpy codebook (codec.encode) decodes to the same rows, and the rounds rows
    pass encode's checks (the writer skips them, trusting the simulator)."""
    task, logical, stored = shard
    want = logical[table]
    assert want.schema == codec.LOGICAL[table]
    assert stored[table].schema.remove_metadata() == codec.STORED[table]
    games = logical["games"].num_rows // task.n_players
    # a row a game (no events rows when the shard captures none)
    assert stored[table].num_rows == (games if table == "rounds" or task.capture_events else 0)
    assert_rows(decoded(table, stored[table]), want)
    again = codec.encode(table, want, check=True)
    assert_rows(decoded(table, again), want)
    if table == "rounds":  # one encoder: the same bytes
        assert (
            again.equals(stored[table]) and again.schema.metadata == stored[table].schema.metadata
        )
    # games and rollups are stored as they are
    for other in ("games", "rollups"):
        assert stored[other].equals(logical[other])
        assert codec.encode(other, logical[other]) is logical[other]
        assert codec.decode(other, logical[other], None).equals(logical[other])


def test_events_codebooks_hold_each_code_once(shard) -> None:
    """The writer's codebook is in first-seen order, numpy's sorted; both hold each distinct
    code once, at the narrowest width that indexes them."""
    _, logical, stored = shard
    codes = np.asarray(logical["events"].column("codes").combine_chunks().flatten().to_pylist())
    codes = codes.astype(np.int64)
    first_seen = np.array(list(dict.fromkeys(codes.tolist())), dtype=np.int64)
    for table, book_order in (
        (stored["events"], first_seen),
        (codec.encode("events", logical["events"]), np.unique(codes)),
    ):
        meta = table.schema.metadata
        book = np.frombuffer(meta[codec.CODEBOOK], dtype="<i8")
        assert np.array_equal(book, book_order)
        assert meta[codec.WIDTH] == (b"1" if book.size <= 256 else b"2")


@pytest.mark.parametrize("table", TABLES)
def test_a_shard_through_a_parquet_file(shard, table: str, tmp_path: Path) -> None:
    """write_table then read_table (all columns, each subset, pyarrow's own read + logical)
    gives the logical rows; the codebook or policy names sit in the file's key-value metadata
    once, not again in an Arrow schema."""
    _, logical, stored = shard
    want = logical[table]
    for name, form in (("writer", stored[table]), ("numpy", codec.encode(table, want))):
        path = tmp_path / f"{name}.parquet"
        codec.write_table(form, path, compression="zstd")
        meta = pq.ParquetFile(path).metadata.metadata
        assert b"ARROW:schema" not in meta
        assert set(form.schema.metadata) <= set(meta)
        assert_rows(codec.read_table(path, table), want)
        assert_rows(codec.logical(table, pq.read_table(path)), want)
        with path.open("rb") as f:  # a file object, as the object store hands it
            assert_rows(codec.read_table(f, table), want)
        for columns in subsets(table):
            assert_rows(codec.read_table(path, table, columns), want.select(columns))


def subsets(table: str) -> list[list[str]]:
    names = list(codec.LOGICAL[table].names)
    return [[c] for c in names] + [names[::-1], names[1:3], [names[-1], names[0]]]


def test_decode_takes_batches_slices_and_chunks(shard) -> None:
    """What the warehouse hands decode (a record batch, a slice of the stored rows, several
    chunks) decodes to those games' rows; encode takes chunked and sliced logical tables."""
    _, logical, stored = shard
    for table in TABLES:
        want = logical[table]
        rows = stored[table]
        if rows.num_rows < 3:
            continue
        part = rows.slice(1, rows.num_rows - 2)
        games = pc.is_in(want.column("game"), value_set=part.column("game").combine_chunks())
        assert_rows(decoded(table, part), want.filter(games))
        batch = part.combine_chunks().to_batches()[0]
        assert_rows(codec.decode(table, batch, rows.schema.metadata), want.filter(games))
        chunked = pa.concat_tables([rows.slice(0, 2), rows.slice(2)])
        assert_rows(decoded(table, chunked), want)
        first = int(np.sum(np.asarray(pc.equal(want.column("game"), rows.column("game")[0]))))
        split = pa.concat_tables([want.slice(0, first), want.slice(first)])
        assert_rows(decoded(table, codec.encode(table, split)), want)
        assert_rows(decoded(table, codec.encode(table, want.slice(first))), want.slice(first))


def test_a_worker_reading_and_writing_needs_no_pandas() -> None:
    """encode and decode read their columns from buffers (np.asarray of an Arrow array would
    import pandas in every worker)."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from lakecontract import codec\n"
        "from pipeline.shard import ShardTask, simulate_shard\n"
        "t = ShardTask('c', 0, 0, 0, ('ev', 'sum:20'), '3.1', 'classic', 1, True, 0, 0, 4,"
        " engine='reference')\n"
        "logical = simulate_shard(t)\n"
        "for name in ('events', 'rounds'):\n"
        "    s = codec.encode(name, logical[name])\n"
        "    assert codec.decode(name, s, s.schema.metadata).equals(logical[name])\n"
        "print('pandas' in sys.modules)\n"
    )
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"},
        cwd=root,
    )
    assert out.stdout.strip() == "False", out.stderr


# --- random tables ------------------------------------------------------------------------------

#: Codes as the kernel stores them (small packed events, HIT-folded ones at and above
#: 1 << HIT_SHIFT) and any int64 at all, drawn from a pool so that codes repeat.
codes_strategy = st.one_of(
    st.integers(0, (1 << 40) - 1),
    st.integers(1 << HIT_SHIFT, (1 << 63) - 1),
    st.integers(-(1 << 63), -1),
    st.sampled_from([0, -1, 1, (1 << 63) - 1, -(1 << 63), 1 << HIT_SHIFT]),
)
event_rows = st.lists(
    st.tuples(
        st.integers(-(1 << 63), (1 << 63) - 1),  # game
        st.lists(st.integers(-(1 << 15), (1 << 15) - 1), max_size=6),  # round lengths
        st.lists(codes_strategy, max_size=40),
    ),
    max_size=12,
)


def events_of(rows: list[tuple[int, list[int], list[int]]]) -> pa.Table:
    return pa.table(
        {
            "game": [r[0] for r in rows],
            "rounds": [r[1] for r in rows],
            "codes": [r[2] for r in rows],
        },
        schema=codec.EVENTS,
    )


def via_file(table: str, stored: pa.Table, columns: list[str] | None = None) -> pa.Table:
    sink = pa.BufferOutputStream()
    codec.write_table(stored, sink)
    return codec.read_table(pa.BufferReader(sink.getvalue()), table, columns)


@settings(max_examples=60, deadline=None)
@given(event_rows)
def test_random_events_round_trip(rows) -> None:
    """Any logical events table (any int64 codes, any lengths, empty lists, no rows) comes back
    exactly, with either codebook, directly and through a Parquet file."""
    want = events_of(rows)
    for indexer in (None, codec.unique_index, index_codes):
        stored = codec.encode("events", want, indexer)
        assert stored.num_rows == len(rows)
        assert_rows(decoded("events", stored), want)
        assert_rows(via_file("events", stored), want)
        assert_rows(via_file("events", stored, ["codes"]), want.select(["codes"]))


@st.composite
def rounds_tables(draw: st.DrawFn) -> pa.Table:
    """A valid logical rounds table: games in order, each with 1.. rounds of every seat, one
    dealer a round and one policy a seat, totals the running sums of random scores."""
    n = draw(st.integers(1, 8))
    names = draw(st.lists(st.text(max_size=12), min_size=1, max_size=5, unique=True))
    games = sorted(draw(st.sets(st.integers(-(1 << 62), 1 << 62), max_size=6)))
    cols: dict[str, list] = {c: [] for c in codec.ROUNDS.names}
    policy: list[int] = []
    for game in games:
        seats = draw(st.lists(st.integers(0, len(names) - 1), min_size=n, max_size=n))
        total = [0] * n
        for rnd in range(1, draw(st.integers(1, 5)) + 1):
            dealer = draw(st.integers(-128, 127))
            for seat in range(n):
                score = draw(st.integers(-(1 << 15), (1 << 15) - 1))
                total[seat] += score
                cols["game"].append(game)
                cols["round"].append(rnd)
                cols["seat"].append(seat)
                policy.append(seats[seat])
                cols["dealer"].append(dealer)
                cols["score"].append(score)
                cols["total"].append(total[seat])
                cols["busted"].append(draw(st.booleans()))
                cols["flip7"].append(draw(st.booleans()))
                cols["status"].append(draw(st.integers(0, 3)))
    cols["policy"] = arrow.dictionary(np.asarray(policy, dtype=np.int32), names)  # type: ignore[assignment]
    return pa.table(cols, schema=codec.ROUNDS)


@settings(max_examples=60, deadline=None)
@given(rounds_tables())
def test_random_rounds_round_trip(want: pa.Table) -> None:
    """Any valid logical rounds table (negative scores and dealers, any policy names) comes
    back exactly, totals rebuilt from the scores, directly and through a Parquet file."""
    stored = codec.encode("rounds", want, check=True)
    assert stored.num_rows == len(set(want.column("game").to_pylist()))
    assert_rows(decoded("rounds", stored), want)
    assert_rows(via_file("rounds", stored), want)
    assert_rows(via_file("rounds", stored, ["total", "policy"]), want.select(["total", "policy"]))


@pytest.mark.parametrize(
    ("distinct", "width"), [(1, 1), (256, 1), (257, 2), (65_536, 2), (65_537, 4), (70_000, 4)]
)
def test_the_index_width_is_the_fewest_bytes_that_hold_the_codebook(distinct, width) -> None:
    rng = np.random.default_rng(distinct)
    pool = rng.choice(1 << 62, size=distinct, replace=False).astype(np.int64) - (1 << 61)
    codes = np.concatenate([pool, rng.choice(pool, size=2 * distinct)])
    offsets = np.linspace(0, codes.size, 8).astype(np.int32)
    want = pa.table(
        {
            "game": arrow.array(np.arange(7, dtype=np.int64), pa.int64()),
            "rounds": pa.array([[1]] * 7, codec.EVENTS.field("rounds").type),
            "codes": arrow.list_array(offsets, codes, codec.EVENTS.field("codes").type),
        },
        schema=codec.EVENTS,
    )
    for indexer in (codec.unique_index, index_codes):
        stored = codec.encode("events", want, indexer)
        meta = stored.schema.metadata
        assert meta[codec.WIDTH] == str(width).encode()
        assert len(meta[codec.CODEBOOK]) == 8 * distinct
        blob = stored.column("codes").combine_chunks()
        assert sum(len(b) for b in blob.to_pylist()) == width * codes.size
        assert_rows(decoded("events", stored), want)
        assert_rows(via_file("events", stored), want)


@settings(max_examples=80, deadline=None)
@given(st.lists(codes_strategy, max_size=3000))
def test_index_codes_numbers_codes_in_first_seen_order(codes: list[int]) -> None:
    """pipeline.codebook.index_codes: book[index] == codes, each code in the book once, in the
    order it first occurs."""
    arr = np.asarray(codes, dtype=np.int64)
    book, index = index_codes(arr)
    assert book.dtype == np.int64 and index.shape == arr.shape
    assert np.array_equal(book[index], arr)
    assert book.tolist() == list(dict.fromkeys(codes))


def test_index_codes_grows_its_table_and_handles_colliding_codes() -> None:
    """Many distinct codes (the hash table doubles several times) and codes that differ only
    in their high bits or sign (the bits the hash reads first) still get their own numbers."""
    rng = np.random.default_rng(3)
    high = np.arange(5000, dtype=np.int64) << 50
    arr = np.concatenate([high, -high, rng.integers(-(1 << 63), 1 << 63, 100_000), high])
    book, index = index_codes(arr)
    assert np.array_equal(book[index], arr)
    assert len(np.unique(book)) == book.size == len(dict.fromkeys(arr.tolist()))
    assert np.array_equal(book[: high.size], high)


# --- damage -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored_pair() -> tuple[pa.Table, pa.Table]:
    """A small 3-seat shard's stored events and rounds."""
    tables = simulate_shard(shard_task("classic", ("ev", "sum:20", "count:4"), 4), stored=True)
    return tables["events"], tables["rounds"]


def with_column(stored: pa.Table, name: str, values: list) -> pa.Table:
    i = stored.schema.get_field_index(name)
    return stored.set_column(i, name, pa.array(values, pa.binary()))


def with_meta(stored: pa.Table, **changes: bytes | None) -> dict[bytes, bytes]:
    """The stored table's metadata changed as given (None: dropped), its CRC-32 recomputed
    unless `crc32` is among the changes: a file written so, whose checksum agrees, reaches the
    checks of its values."""
    meta = dict(stored.schema.metadata)
    for key, value in changes.items():
        k = f"flip7.{key}".encode()
        if value is None:
            meta.pop(k, None)
        else:
            meta[k] = value
    if "crc32" not in changes:
        meta[codec.CHECK] = codec.checksum(meta)
    return meta


def assert_refused(table: str, stored: pa.Table, meta, match: str, tmp_path: Path) -> None:
    """decode refuses with a ValueError matching `match`; so does reading the file it makes."""
    with pytest.raises(ValueError, match=match):
        codec.decode(table, stored, meta)
    path = tmp_path / f"{table}.parquet"
    codec.write_table(stored.replace_schema_metadata(meta), path)
    with pytest.raises(ValueError, match=match):
        codec.read_table(path, table)
    with pytest.raises(ValueError, match=match):
        codec.logical(table, pq.read_table(path))


def test_a_codebook_not_of_whole_codes_is_refused(stored_pair, tmp_path) -> None:
    events, _ = stored_pair
    book = events.schema.metadata[codec.CODEBOOK]
    for cut in (1, 7):
        meta = with_meta(events, codebook=book[:-cut])
        assert_refused("events", events, meta, "not a whole number of 8-byte codes", tmp_path)


@pytest.mark.parametrize("width", [b"0", b"3", b"8", b"", b"x", b" 1", b"01", b"-1"])
def test_an_index_width_other_than_1_2_4_is_refused(stored_pair, width, tmp_path) -> None:
    events, _ = stored_pair
    meta = with_meta(events, width=width)
    assert_refused("events", events, meta, "index width .* is not 1, 2 or 4 bytes", tmp_path)


def test_an_index_past_the_codebook_is_refused(stored_pair, tmp_path) -> None:
    events, _ = stored_pair
    book = events.schema.metadata[codec.CODEBOOK]
    meta = with_meta(events, codebook=book[:-8])
    n = len(book) // 8 - 1
    assert_refused("events", events, meta, f"index {n} is past the codebook's {n} codes", tmp_path)
    # a wider index than the book takes: 2-byte indices said of a book of 1-byte ones would
    # read pairs of real indices as made-up ones
    wide = with_column(events, "codes", [b"\x00\x00\xff\x7f"] * events.num_rows)
    says = "take 1-byte indices, not the 2 the file says"
    assert_refused("events", wide, with_meta(events, width=b"2"), says, tmp_path)
    # an index past a book that does take 2-byte ones
    big = with_meta(events, width=b"2", codebook=np.arange(300, dtype="<i8").tobytes())
    assert_refused("events", wide, big, "index 32767 is past the codebook's 300", tmp_path)


def test_a_blob_not_of_whole_values_is_refused(stored_pair, tmp_path) -> None:
    events, rounds = stored_pair
    # codebooks that take the widths said (a narrower one is refused for that first)
    two = with_meta(events, width=b"2", codebook=np.arange(300, dtype="<i8").tobytes())
    odd = with_column(events, "codes", [b"\x00\x00\x00"] + [b""] * (events.num_rows - 1))
    assert_refused("events", odd, two, "'codes' value is not a whole number of 2-byte", tmp_path)
    # whole in total, not per row
    split = with_column(events, "codes", [b"\x00", b"\x00"] + [b""] * (events.num_rows - 2))
    assert_refused("events", split, two, "not a whole number of 2-byte", tmp_path)
    four = with_meta(events, width=b"4", codebook=np.arange(70_000, dtype="<i8").tobytes())
    assert_refused(
        "events", with_column(events, "codes", [b"\x00" * 6] * 4), four, "4-byte", tmp_path
    )
    lengths = with_column(events, "rounds", [b"\x01"] * events.num_rows)
    meta = dict(events.schema.metadata)
    assert_refused(
        "events", lengths, meta, "'rounds' value is not a whole number of 2-byte", tmp_path
    )
    cells = rounds.column("cells").to_pylist()
    bad = with_column(rounds, "cells", [cells[0][:-1]] + cells[1:])
    meta = dict(rounds.schema.metadata)
    assert_refused("rounds", bad, meta, "'cells' value is not a whole number of 4-byte", tmp_path)


def test_rounds_cells_not_one_per_seat_per_round_are_refused(stored_pair, tmp_path) -> None:
    _, rounds = stored_pair
    meta = dict(rounds.schema.metadata)
    cells = rounds.column("cells").to_pylist()
    for wrong in (cells[0][:-4], cells[0] + cells[0][:4], b""):
        bad = with_column(rounds, "cells", [wrong] + cells[1:])
        assert_refused("rounds", bad, meta, "cells are not one per seat per round", tmp_path)
    # the dealers say one round more than the cells hold
    dealers = rounds.column("dealers").to_pylist()
    bad = with_column(rounds, "dealers", [dealers[0] + b"\x00"] + dealers[1:])
    assert_refused("rounds", bad, meta, "cells are not one per seat per round", tmp_path)


def test_games_with_unequal_or_no_seats_are_refused(stored_pair, tmp_path) -> None:
    _, rounds = stored_pair
    meta = dict(rounds.schema.metadata)
    seats = rounds.column("seats").to_pylist()
    bad = with_column(rounds, "seats", [seats[0][:-1]] + seats[1:])
    assert_refused(
        "rounds", bad, meta, r"not all have the same number of seats \(2 to 3\)", tmp_path
    )
    none = with_column(rounds, "seats", [b""] * rounds.num_rows)
    assert_refused("rounds", none, meta, "game has no seats", tmp_path)


def test_a_policy_index_past_the_names_is_refused(stored_pair, tmp_path) -> None:
    _, rounds = stored_pair
    names = json.loads(rounds.schema.metadata[codec.POLICIES])
    seats = rounds.column("seats").to_pylist()
    bad = with_column(rounds, "seats", seats[:-1] + [bytes([len(names)]) + seats[-1][1:]])
    meta = dict(rounds.schema.metadata)
    match = f"policy {len(names)} is past the {len(names)} names"
    assert_refused("rounds", bad, meta, match, tmp_path)
    fewer = with_meta(rounds, policies=json.dumps(names[:1]).encode())
    assert_refused("rounds", rounds, fewer, "is past the 1 names", tmp_path)


@pytest.mark.parametrize(
    "raw", [b"not json", b'{"ev": 0}', b"[1, 2]", b'["ev", null]', b'"ev"', b"\xff\xfe", b""]
)
def test_policy_names_not_a_json_list_of_strings_are_refused(stored_pair, raw, tmp_path) -> None:
    _, rounds = stored_pair
    meta = with_meta(rounds, policies=raw)
    assert_refused("rounds", rounds, meta, "'flip7.policies' metadata is not a JSON list", tmp_path)


@pytest.mark.parametrize(
    ("table", "drop", "key"),
    [
        ("events", ("codebook",), "flip7.codebook"),
        ("events", ("width",), "flip7.width"),
        ("events", ("codebook", "width"), "flip7.(width|codebook)"),
        ("rounds", ("policies",), "flip7.policies"),
    ],
)
def test_missing_metadata_is_refused(stored_pair, table, drop, key, tmp_path) -> None:
    stored = dict(zip(TABLES, stored_pair, strict=True))[table]
    meta = with_meta(stored, **dict.fromkeys(drop))
    assert_refused(table, stored, meta, f"no '{key}' in its metadata", tmp_path)
    with pytest.raises(ValueError, match="in its metadata: not a stored file"):
        codec.decode(table, stored, None)
    with pytest.raises(ValueError, match="in its metadata: not a stored file"):
        codec.decode(table, stored, {})


@pytest.mark.parametrize(
    ("table", "key"),
    [("events", "codebook"), ("events", "width"), ("rounds", "policies"), ("events", "crc32")],
)
def test_metadata_changed_in_place_fails_its_checksum(stored_pair, table, key, tmp_path) -> None:
    """Parquet checks that a footer parses, not its values: a codebook, width or list of policy
    names changed without its CRC-32 (or the CRC-32 itself changed) is refused as damaged,
    however plausible the values it would decode to."""
    stored = dict(zip(TABLES, stored_pair, strict=True))[table]
    meta = dict(stored.schema.metadata)
    k = f"flip7.{key}".encode()
    if key == "codebook":  # two codes swapped: a whole codebook, every index inside it
        book = bytearray(meta[k])
        book[:8], book[8:16] = book[8:16], book[:8]
        meta[k] = bytes(book)
    elif key == "width":
        meta[k] = b"4"
    elif key == "policies":
        meta[k] = meta[k].replace(b'"ev"', b'"ec"')  # still a JSON list of names
    else:
        meta[k] = b"1" + meta[k]
    assert meta != dict(stored.schema.metadata)
    assert_refused(table, stored, meta, "do not match their CRC-32: the file is damaged", tmp_path)


def test_a_file_is_checked_whichever_columns_are_decoded(stored_pair) -> None:
    """A query that decodes only a file's games and round lengths, or its rounds' scores,
    still has the file's metadata and every stored column it reads checked: a file without its
    codebook or policy names, or with a seat past the names, is refused by name, not read in
    part (the columns decoded are still only those asked for)."""
    events, rounds = stored_pair
    full = decoded("events", events)
    got = codec.decode("events", events, events.schema.metadata, ["game", "rounds"])
    assert got.equals(full.select(["game", "rounds"]))
    with pytest.raises(ValueError, match="no 'flip7.crc32' in its metadata"):
        codec.decode("events", events, None, ["game", "rounds"])
    columns = ["game", "round", "seat", "dealer", "score", "total", "status"]
    assert codec.decode("rounds", rounds, rounds.schema.metadata, columns).equals(
        decoded("rounds", rounds).select(columns)
    )
    with pytest.raises(ValueError, match="no 'flip7.crc32' in its metadata"):
        codec.decode("rounds", rounds, None, columns)
    meta = {**rounds.schema.metadata, codec.POLICIES: b'["ev"]'}
    meta[codec.CHECK] = codec.checksum(meta)
    with pytest.raises(ValueError, match="past the 1 names"):
        codec.decode("rounds", rounds, meta, ["game", "score"])


def test_nulls_and_wrong_types_in_stored_columns_are_refused(stored_pair) -> None:
    events, rounds = stored_pair
    meta = dict(events.schema.metadata)
    nulls = events.set_column(2, "codes", pa.array([None] * events.num_rows, pa.binary()))
    with pytest.raises(ValueError, match="'codes' holds 4 nulls"):
        codec.decode("events", nulls, meta)
    text = events.set_column(1, "rounds", pa.array(["x"] * events.num_rows))
    with pytest.raises(ValueError, match="'rounds' is string, not binary"):
        codec.decode("events", text, meta)


# --- encode's checks ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def logical_rounds() -> pa.Table:
    """Three games of three seats, as the simulator makes them."""
    task = shard_task("classic", ("ev", "sum:20", "count:4"), 3)
    return simulate_shard(task)["rounds"]


def rows_of(table: pa.Table, order: list[int]) -> pa.Table:
    return table.take(pa.array(order, pa.int64()))


def edited(table: pa.Table, name: str, row: int, value: object) -> pa.Table:
    values = table.column(name).to_pylist()
    values[row] = value
    field = table.schema.field(name)
    column = (
        pa.array(values, field.type) if name != "policy" else pa.array(values).dictionary_encode()
    )
    return table.set_column(table.schema.get_field_index(name), field, column)


def refused(table: pa.Table, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        codec.encode("rounds", table, check=True)


def test_encode_refuses_rounds_out_of_order(logical_rounds) -> None:
    t = logical_rounds
    order = list(range(t.num_rows))
    order[0], order[1] = order[1], order[0]  # seats 0 and 1 of game 103's round 1 swapped
    refused(
        rows_of(t, order),
        r"game 103, round 1, seat 0: no row where it belongs \(found round 1, seat 1",
    )
    per_game = [t.column("game").to_pylist().count(g) for g in (103, 104, 105)]
    order = list(range(per_game[0], per_game[0] + per_game[1])) + list(range(per_game[0]))
    order += list(range(per_game[0] + per_game[1], t.num_rows))
    refused(rows_of(t, order), "game 103, round 1, seat 0: comes after game 104")
    # round 2's rows before round 1's
    order = [3, 4, 5, 0, 1, 2] + list(range(6, t.num_rows))
    refused(rows_of(t, order), "game 103, round 1, seat 0: no row where it belongs .found round 2")


def test_encode_refuses_missing_seats(logical_rounds) -> None:
    t = logical_rounds
    drop = [i for i in range(t.num_rows) if i != 4]  # game 103, round 2, seat 1
    refused(
        rows_of(t, drop),
        r"game 103, round 2, seat 1: no row where it belongs \(found round 2, seat 2",
    )
    games = t.column("game").to_pylist()
    last = games.index(104) - 1  # game 103's last row: its last round's seat 2
    rounds_103 = t.column("round")[last].as_py()
    drop = [i for i in range(t.num_rows) if i != last]
    refused(rows_of(t, drop), f"game 103, round {rounds_103}, seat 2: no row; the stored rounds")
    # a row for a fourth seat in one game
    extra = rows_of(t, [0, 1, 2, 2] + list(range(3, t.num_rows)))
    extra = edited(extra, "seat", 3, 3)
    # (the table now has four seats: game 103's round 2 lacks its seat 3)
    refused(extra, "game 103, round 2, seat 3: no row where it belongs .found round 3, seat 0")


def test_encode_refuses_a_total_that_is_not_the_running_sum(logical_rounds) -> None:
    t = logical_rounds
    row = 7  # game 103, round 3, seat 1
    bad = edited(t, "total", row, t.column("total")[row].as_py() + 1)
    want = t.column("total")[row].as_py()
    refused(
        bad, f"game 103, round 3, seat 1: total {want + 1} is not the running sum .*\\({want}\\)"
    )
    # a score changed without its totals: the next rows of that seat are wrong too
    bad = edited(t, "score", 4, t.column("score")[4].as_py() + 5)
    refused(bad, "game 103, round 2, seat 1: total")
    codec.encode("rounds", bad, check=False)  # the writer's path trusts its rows


def test_encode_refuses_what_the_stored_form_cannot_hold(logical_rounds) -> None:
    """A dealer that differs within a round, a policy that differs across a seat's rounds or
    a status outside 0..3 would come back different: refused, naming the row."""
    t = logical_rounds
    refused(
        edited(t, "dealer", 5, t.column("dealer")[5].as_py() + 1),
        "game 103, round 2, seat 2: its dealer",
    )
    other = "ev" if t.column("policy")[4].as_py() != "ev" else "sum:20"
    refused(edited(t, "policy", 4, other), "game 103, round 2, seat 1: its policy")
    refused(edited(t, "status", 2, 5), "game 103, round 1, seat 2: status is not 0..3")
    refused(edited(t, "status", 2, -1), "game 103, round 1, seat 2: status is not 0..3")


def test_encode_takes_an_empty_table() -> None:
    for table in TABLES:
        empty = codec.LOGICAL[table].empty_table()
        stored = codec.encode(table, empty)
        assert stored.num_rows == 0
        assert_rows(decoded(table, stored), empty)
        assert_rows(via_file(table, stored), empty)


@pytest.mark.parametrize(("table", "view"), [("events", "stg_events"), ("rounds", "stg_rounds")])
def test_the_warehouse_names_a_damaged_file(tmp_path: Path, table: str, view: str) -> None:
    """A query over a file whose metadata is damaged fails with the file's path and what is
    wrong, whether DuckDB reads it batch by batch or a reader takes it whole."""
    import duckdb

    from tests.warehouse.lakes import shard_path, write_run
    from warehouse.db import connect

    tasks = write_run(tmp_path, "t2")
    path = shard_path(tmp_path, table, tasks[0])
    stored = pq.read_table(path)
    key = codec.CODEBOOK if table == "events" else codec.POLICIES
    meta = {**stored.schema.metadata, key: stored.schema.metadata[key][:-1]}
    meta[codec.CHECK] = codec.checksum(meta)  # past the checksum, to the values' own checks
    codec.write_table(stored.replace_schema_metadata(meta), path)
    con = connect(tmp_path)
    try:
        wrong = "not a whole number of 8-byte codes" if table == "events" else "not a JSON list"
        with pytest.raises(duckdb.Error, match=f"{re.escape(str(path))}: .*{wrong}"):
            con.sql(f"SELECT count(*) FROM {view} WHERE run = 't2'").fetchall()
    finally:
        con.close()


def test_a_stored_table_is_told_from_a_logical_one() -> None:
    """The stored and the logical events have the same column names: only the stored form is
    decoded, and logical rows pass as they are."""
    logical = simulate_shard(shard_task("classic", ("ev", "sum:20"), 3))
    for table in TABLES:
        stored = codec.encode(table, logical[table])
        assert codec.is_stored(stored.schema, table)
        assert not codec.is_stored(logical[table].schema, table)
        assert codec.logical(table, logical[table]) is logical[table]
        assert_rows(codec.logical(table, stored), logical[table])
        assert not codec.is_stored(stored.schema, "games")
