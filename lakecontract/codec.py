"""How the events and rounds files store their rows, and the rows every reader gets back.

Every reader (the warehouse's SQL, verify, replay, upgrade) sees the same *logical* tables,
EVENTS and ROUNDS below; the files hold them in a compact *stored* form that costs the writer
a few values a game instead of hundreds (each value Parquet encodes costs about 10 ns; a
four-player game has ~190 event codes and 32 round rows of 10 columns). `decode` turns stored
rows back into logical ones, `encode` the other way; games and rollups are stored as they are.

Stored events, one row per game:
    game    int64
    rounds  binary: the game's round lengths (stored codes per round), little-endian int16 each
    codes   binary: the game's stored codes (see pipeline.schema) as little-endian unsigned
            indices into the file's codebook, WIDTH bytes each
and in the file's key-value metadata `flip7.codebook`, the codebook: its distinct int64 codes,
little-endian, and `flip7.width`, the bytes an index takes (1, 2 or 4: the fewest that hold
every index of the codebook).

Stored rounds, one row per game:
    game     int64
    seats    binary: each seat's policy, a uint8 index into the file's `flip7.policies`
             (JSON list of names in the key-value metadata)
    dealers  binary: each round's dealer seat, int8
    cells    binary: per round, per seat, little-endian int32: score << 4 | busted << 3 |
             flip7 << 2 | status
A rounds row's `total` is the seat's running sum of its scores (the kernel's and the reference
engine's totals are exactly that; upgrade refuses a run where they are not).

Both files' key-value metadata also hold `flip7.crc32`, the CRC-32 of the codebook and width
or the policy names (`checksum`): Parquet checks that a footer parses, not the values in it.

Decoding reads bytes as numbers and nothing else: a codebook, index or length that does not
fit, or metadata that does not match its CRC-32, is a ValueError naming what is wrong, never a
crash or a guess.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Mapping
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lakecontract import arrow

_dict = pa.dictionary(pa.int32(), pa.string())


def _fields(*cols: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, kind, nullable=False) for name, kind in cols])


#: The events table as every reader sees it: `rounds` the game's round lengths, `codes` its
#: stored codes (pipeline.schema says what a code holds).
EVENTS = _fields(
    ("game", pa.int64()),
    ("rounds", pa.list_(pa.field("element", pa.int16(), nullable=False))),
    ("codes", pa.list_(pa.field("element", pa.int64(), nullable=False))),
)

#: The rounds table as every reader sees it: one row per seat per round.
ROUNDS = _fields(
    ("game", pa.int64()),
    ("round", pa.int16()),
    ("seat", pa.int8()),
    ("policy", _dict),
    ("dealer", pa.int8()),  # the round's dealer seat
    ("score", pa.int16()),
    ("total", pa.int32()),  # the seat's game total after this round
    ("busted", pa.bool_()),
    ("flip7", pa.bool_()),
    # at round end: 0 active (Flip 7 ended it), 1 stayed, 2 frozen, 3 busted
    ("status", pa.int8()),
)

STORED_EVENTS = _fields(("game", pa.int64()), ("rounds", pa.binary()), ("codes", pa.binary()))
STORED_ROUNDS = _fields(
    ("game", pa.int64()), ("seats", pa.binary()), ("dealers", pa.binary()), ("cells", pa.binary())
)
LOGICAL = {"events": EVENTS, "rounds": ROUNDS}
STORED = {"events": STORED_EVENTS, "rounds": STORED_ROUNDS}
#: Which stored columns each logical column is decoded from.
SOURCES = {
    "events": {"game": ("game",), "rounds": ("rounds",), "codes": ("codes",)},
    "rounds": {
        "game": ("game",),
        "round": ("dealers",),
        "seat": ("seats",),
        "policy": ("seats",),
        "dealer": ("dealers",),
        **{c: ("cells",) for c in ("score", "total", "busted", "flip7", "status")},
    },
}
#: Every logical rounds column needs the row count of each game, from `seats` and `dealers`.
_ROUND_SHAPE = ("seats", "dealers")

CODEBOOK, WIDTH, POLICIES = b"flip7.codebook", b"flip7.width", b"flip7.policies"
#: A CRC-32 of the file's other flip7 metadata: Parquet checks that a footer parses, not the
#: values it holds, and a codebook damaged in place would otherwise decode to other codes.
CHECK = b"flip7.crc32"
_WIDTHS = {1: "<u1", 2: "<u2", 4: "<u4"}

Metadata = Mapping[bytes, bytes] | None
#: A codebook builder: the codes -> (the distinct codes, each code's index into them).
Indexer = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def is_stored(schema: pa.Schema, table: str) -> bool:
    """Whether a file's schema is the stored form of `table` (events or rounds): its columns'
    names and types (the logical events table has the same column names, as lists)."""
    if table not in STORED:
        return False
    want = [(f.name, f.type) for f in STORED[table]]
    return [(f.name, f.type) for f in schema][: len(want)] == want


def stored_columns(table: str, columns: list[str] | None) -> list[str]:
    """The stored columns that the logical `columns` (None: all) of `table` are decoded from."""
    if columns is None:
        return list(STORED[table].names)
    need: set[str] = set()
    for c in columns:
        if c not in SOURCES[table]:
            raise KeyError(f"the {table} table has no column {c!r}")
        need.update(SOURCES[table][c])
    if table == "rounds":  # every column repeats or numbers a game's rows
        need.update(_ROUND_SHAPE)
    return [c for c in STORED[table].names if c in need]


def unique_index(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct codes and each code's index into them (numpy: what upgrade and tests
    use; the pipeline's writer builds its codebook in one compiled pass, in first-seen order)."""
    book, index = np.unique(codes, return_inverse=True)
    return book.astype(np.int64), index.reshape(-1)


# --- encoding -------------------------------------------------------------------------------


def encode(
    table: str, logical: pa.Table, indexer: Indexer | None = None, check: bool = True
) -> pa.Table:
    """The stored form of a logical events or rounds table (games and rollups pass as they
    are), its metadata attached to the schema (write_table puts it in the file's footer).
    `indexer` builds the events' codebook; `check`: see encode_rounds."""
    if table == "events":
        return encode_events(logical, indexer)
    if table == "rounds":
        return encode_rounds(logical, check)
    return logical


def _blob(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A binary column: row i holds data's bytes [offsets[i], offsets[i + 1])."""
    if int(offsets[-1]) >= 1 << 31:
        raise ValueError("a stored column exceeds 2 GiB in one file; write smaller shards")
    return pa.Array.from_buffers(
        pa.binary(),
        len(offsets) - 1,
        [None, pa.py_buffer(np.ascontiguousarray(offsets, dtype=np.int32)), pa.py_buffer(data)],
    )


def _list_parts(column: pa.ChunkedArray | pa.Array, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """(offsets from 0, values) of a non-null list column."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    offsets = arrow.numpy(column.offsets).astype(np.int64)  # buffers: no pandas
    values = arrow.numpy(column.flatten()).astype(dtype, copy=False)
    return offsets - offsets[0], values


def encode_events(logical: pa.Table, indexer: Indexer | None = None) -> pa.Table:
    """Stored events from logical ones; `indexer` builds the codebook (unique_index if None)."""
    round_offsets, lengths = _list_parts(logical.column("rounds"), np.int16)
    offsets, codes = _list_parts(logical.column("codes"), np.int64)
    game = _np(logical.column("game"), np.int64)
    return stored_events(game, round_offsets, lengths, offsets, codes, indexer)


def stored_events(
    game: np.ndarray,
    round_offsets: np.ndarray,
    lengths: np.ndarray,
    offsets: np.ndarray,
    codes: np.ndarray,
    indexer: Indexer | None = None,
) -> pa.Table:
    """The stored events table of game rows given as arrays: game i's round lengths are
    `lengths[round_offsets[i]:round_offsets[i + 1]]`, its codes `codes[offsets[i]:offsets[i + 1]]`
    (offsets from 0)."""
    book, index = (indexer or unique_index)(codes)
    width = _width(len(book))
    packed = index.astype(_WIDTHS[width])
    round_offsets = np.asarray(round_offsets, dtype=np.int64)
    stored = pa.Table.from_arrays(
        [
            arrow.array(game, pa.int64()),
            _blob(round_offsets * 2, np.asarray(lengths, dtype="<i2").view(np.uint8)),
            _blob(np.asarray(offsets, dtype=np.int64) * width, packed.view(np.uint8)),
        ],
        schema=STORED_EVENTS,
    )
    meta = {CODEBOOK: book.astype("<i8").tobytes(), WIDTH: str(width).encode()}
    return stored.replace_schema_metadata({**meta, CHECK: checksum(meta)})


def _width(codes: int) -> int:
    """The bytes an index into a codebook of `codes` codes takes: the fewest of 1, 2, 4."""
    return 1 if codes <= 1 << 8 else 2 if codes <= 1 << 16 else 4


def encode_rounds(logical: pa.Table, check: bool = True) -> pa.Table:
    """Stored rounds from logical ones: rows in (game, round, seat) order, every game with a
    row for each of its seats in each of its rounds 1..R, the same seats in every game, one
    dealer a round, one policy a seat, each status 0..3 and each `total` its seat's running sum
    of scores. With `check` (upgrade, tests), a table that is not so is a ValueError naming the
    game, round and seat of the first row that is not; the shard writer, whose rows are so by
    construction (tests hold them to it), skips the check."""
    t = logical.combine_chunks()
    col = {name: t.column(name) for name in ROUNDS.names}
    game = _np(col["game"], np.int64)
    seat = _np(col["seat"], np.int64)
    n = int(seat.max()) + 1 if seat.size else 1
    # the games' first rows: where the game id changes
    starts = np.flatnonzero(np.r_[True, game[1:] != game[:-1]]) if game.size else game
    rows = np.diff(np.r_[starts, game.size])
    score = _np(col["score"], np.int32)
    dealer = _np(col["dealer"], np.int8)
    status = _np(col["status"], np.int32)
    names, policy = _dictionary(col["policy"])
    if check:
        rnd = _np(col["round"], np.int64)
        _check_rounds(game, rnd, seat, score, col["total"], starts, rows, n, dealer, policy, status)
    return stored_rounds(
        game[starts],
        rows // n,
        policy[(starts[:, None] + np.arange(n)).reshape(-1)] if game.size else policy[:0],
        dealer[::n],
        score,
        _np(col["busted"], np.int32),
        _np(col["flip7"], np.int32),
        status,
        names,
    )


def stored_rounds(
    game: np.ndarray,
    rounds: np.ndarray,
    seats: np.ndarray,
    dealers: np.ndarray,
    score: np.ndarray,
    busted: np.ndarray,
    flip7: np.ndarray,
    status: np.ndarray,
    names: list[str],
) -> pa.Table:
    """The stored rounds table from arrays: each game's id and round count, its seats' policy
    indices into `names` (games x seats, flat), each round's dealer, and each row's score,
    busted, flip7 and status (rows in game, round, seat order)."""
    if len(names) > 256:
        raise ValueError(f"{len(names)} policies in one rounds file; at most 256 are stored")
    n = len(seats) // len(game) if len(game) else 1
    flags = np.asarray(status, dtype=np.int8) & 3  # the low bits, on one-byte arrays
    flags |= np.asarray(flip7, dtype=np.int8) << 2
    flags |= np.asarray(busted, dtype=np.int8) << 3
    cells = np.asarray(score, dtype=np.int32) << 4
    cells |= flags
    round_off = np.zeros(len(game) + 1, dtype=np.int64)
    np.cumsum(rounds, out=round_off[1:])
    stored = pa.Table.from_arrays(
        [
            arrow.array(np.asarray(game, dtype=np.int64), pa.int64()),
            _blob(np.arange(len(game) + 1) * n, np.asarray(seats, dtype=np.uint8)),
            _blob(round_off, np.ascontiguousarray(dealers, dtype=np.int8).view(np.uint8)),
            _blob(round_off * n * 4, cells.astype("<i4", copy=False).view(np.uint8)),
        ],
        schema=STORED_ROUNDS,
    )
    meta = {POLICIES: json.dumps(names).encode()}
    return stored.replace_schema_metadata({**meta, CHECK: checksum(meta)})


def _check_rounds(
    game: np.ndarray,
    rnd: np.ndarray,
    seat: np.ndarray,
    score: np.ndarray,
    total: pa.Array,
    starts: np.ndarray,
    rows: np.ndarray,
    n: int,
    dealer: np.ndarray,
    policy: np.ndarray,
    status: np.ndarray,
) -> None:
    """A ValueError unless the rounds rows are as encode_rounds needs them, naming the game,
    round and seat of the first row that is not."""
    if not game.size:
        return
    back = np.flatnonzero(np.diff(game) < 0)
    if back.size:
        i = int(back[0]) + 1
        raise ValueError(
            f"game {game[i]}, round {rnd[i]}, seat {seat[i]}: comes after game {game[i - 1]}; "
            "the stored rounds need rows in (game, round, seat) order"
        )
    within = np.arange(game.size) - np.repeat(starts, rows)
    want_seat, want_round = within % n, within // n + 1
    bad = np.flatnonzero((seat != want_seat) | (rnd != want_round))
    short = np.flatnonzero(rows % n)  # games whose last round lacks its last seats
    end = starts[short[0]] + rows[short[0]] if short.size else game.size
    if bad.size and bad[0] < end:
        i = int(bad[0])
        raise ValueError(
            f"game {game[i]}, round {want_round[i]}, seat {want_seat[i]}: no row where it "
            f"belongs (found round {rnd[i]}, seat {seat[i]} there); the stored rounds need a "
            f"row for each of the {n} seats of every round, in (game, round, seat) order"
        )
    if short.size:
        g = short[0]
        raise ValueError(
            f"game {game[starts[g]]}, round {rows[g] // n + 1}, seat {rows[g] % n}: no row; the "
            f"stored rounds need a row for each of the {n} seats of every round"
        )

    def refuse(where: np.ndarray, why: str) -> None:
        if where.size:
            i = int(where[0])
            raise ValueError(f"game {game[i]}, round {rnd[i]}, seat {seat[i]}: {why}")

    refuse(
        np.flatnonzero((status < 0) | (status > 3)),
        "status is not 0..3 (active, stayed, frozen, busted)",
    )
    refuse(
        np.flatnonzero(dealer != np.repeat(dealer[::n], n)),
        "its dealer is not its round's first row's; the stored rounds keep one dealer a round",
    )
    first_round = np.repeat(starts, rows) + want_seat  # the seat's row in its game's round 1
    refuse(
        np.flatnonzero(policy != policy[first_round]),
        "its policy is not the seat's in round 1; the stored rounds keep one policy a seat",
    )
    running = _running_totals(score.astype(np.int64), np.repeat(starts, rows), n)
    totals = _np(total, np.int64)
    wrong = np.flatnonzero(running != totals)
    if wrong.size:
        i = int(wrong[0])
        raise ValueError(
            f"game {game[i]}, round {rnd[i]}, seat {seat[i]}: total {totals[i]} "
            f"is not the running sum of the seat's scores ({running[i]}); the stored rounds "
            "rebuild totals from scores"
        )


def _np(column: pa.Array | pa.ChunkedArray, dtype: type) -> np.ndarray:
    return arrow.numpy(column).astype(dtype, copy=False)


def _dictionary(column: pa.Array | pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    names, index = arrow.dictionary_codes(column)
    return names, index.astype(np.int64)


def _running_totals(score: np.ndarray, game_start: np.ndarray, n: int) -> np.ndarray:
    """Each row's running sum of its seat's scores within its game (rows in game, round, seat
    order, n seats: row i's seat is i % n from its game's first row)."""
    if not score.size:
        return score.copy()
    by_seat = score.reshape(-1, n)
    cum = np.cumsum(by_seat, axis=0)
    first_row = game_start.reshape(-1, n)[:, 0] // n  # the game's first round row
    before = np.where(first_row[:, None] > 0, cum[np.maximum(first_row - 1, 0)], 0)
    return (cum - before).reshape(-1)


def write_table(table: pa.Table, where: object, **options: object) -> None:
    """pq.write_table, except that a stored table's metadata (its codebook or policy names) goes
    into the file's key-value metadata alone, not also into its Arrow schema (twice the bytes)."""
    meta = table.schema.metadata
    if not meta or not any(k in meta for k in (CODEBOOK, POLICIES)):
        pq.write_table(table, where, **options)  # type: ignore[arg-type]
        return
    rows = options.pop("row_group_size", None)
    plain = table.replace_schema_metadata(None)
    with pq.ParquetWriter(where, plain.schema, store_schema=False, **options) as writer:  # type: ignore[arg-type]
        writer.add_key_value_metadata(meta)
        writer.write_table(plain, row_group_size=rows)  # type: ignore[arg-type]


def logical(table: str, rows: pa.Table) -> pa.Table:
    """The rows readers see of one file's table as pyarrow read it (`pq.read_table(path)`: the
    file's metadata comes with its schema): decoded if stored, as it is otherwise. Only one
    file's rows: a codebook belongs to its file."""
    if table in STORED and is_stored(rows.schema, table):
        return decode(table, rows, rows.schema.metadata)
    return rows


def read_table(
    source: object, table: str, columns: list[str] | None = None, **options: object
) -> pa.Table:
    """The logical `columns` (None: all) of one file of `table` (a path or file object, and
    pq.ParquetFile's options): decoded if it is stored, as it is otherwise."""
    f = pq.ParquetFile(source, **options)  # type: ignore[arg-type]
    if not is_stored(f.schema_arrow, table):
        return f.read(columns=columns, use_threads=False)
    stored = f.read(columns=stored_columns(table, columns), use_threads=False)
    return decode(table, stored, f.metadata.metadata, columns)


# --- decoding -------------------------------------------------------------------------------


def decode(
    table: str, stored: pa.Table | pa.RecordBatch, meta: Metadata, columns: list[str] | None = None
) -> pa.Table:
    """The logical `columns` (None: all) of stored rows of `table`; meta is the file's
    key-value metadata. Games and rollups come back as they are."""
    if table not in STORED:
        return stored if isinstance(stored, pa.Table) else pa.Table.from_batches([stored])
    names = list(LOGICAL[table].names) if columns is None else columns
    parts = (StoredEvents if table == "events" else StoredRounds)(stored, meta)
    parts.check()  # the metadata and every stored column read, whichever are decoded
    fields = [LOGICAL[table].field(c) for c in names]
    return pa.Table.from_arrays([parts.logical(c) for c in names], schema=pa.schema(fields))


def _binary(stored: pa.Table | pa.RecordBatch, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(offsets from 0 as int64, the bytes) of a stored binary column."""
    column = stored.column(name)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not pa.types.is_binary(column.type):
        raise ValueError(f"stored column {name!r} is {column.type}, not binary")
    if column.null_count:
        raise ValueError(f"stored column {name!r} holds {column.null_count} nulls")
    n = len(column)
    bufs = column.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32, count=n + 1, offset=4 * column.offset)
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offsets - offsets[0], data[offsets[0] : offsets[-1]]


def _values(
    name: str, offsets: np.ndarray, data: np.ndarray, dtype: str
) -> tuple[np.ndarray, np.ndarray]:
    """(element offsets, values) of a binary column holding `dtype` values back to back."""
    size = np.dtype(dtype).itemsize
    if np.any(offsets % size):
        raise ValueError(f"a stored {name!r} value is not a whole number of {size}-byte values")
    values = np.frombuffer(
        data.tobytes() if data.size and data.ctypes.data % size else data, dtype=dtype
    )
    return offsets // size, values


def checksum(meta: Mapping[bytes, bytes]) -> bytes:
    """The CRC-32 (decimal) of a stored file's codebook, width and policy names, those it has."""
    crc = 0
    for key in (CODEBOOK, WIDTH, POLICIES):
        if key in meta:
            crc = zlib.crc32(b"%s %d " % (key, len(meta[key])) + meta[key], crc)
    return str(crc).encode()


def _check(meta: Metadata) -> None:
    """A ValueError unless the file's metadata is as written (its CRC-32 matches)."""
    if _meta(meta, CHECK) != checksum(meta or {}):
        raise ValueError(
            "the footer's codebook, width or policy names do not match their CRC-32: the file "
            "is damaged"
        )


def _meta(meta: Metadata, key: bytes) -> bytes:
    if not meta or key not in meta:
        raise ValueError(f"the file has no {key.decode()!r} in its metadata: not a stored file")
    return meta[key]


def _policy_names(raw: bytes) -> list[str]:
    """The rounds file's policy names from its metadata: a JSON list of strings."""
    try:
        names = json.loads(raw)
    except ValueError:  # not UTF-8, or not JSON
        names = None
    if not isinstance(names, list) or not all(isinstance(s, str) for s in names):
        raise ValueError(
            f"the stored rounds' {POLICIES.decode()!r} metadata is not a JSON list of strings"
        )
    return names


class StoredEvents:
    """One file's stored events as numpy arrays, each checked on first use (a ValueError naming
    what does not fit): what `decode` turns into logical columns, and what verify's compiled
    pass reads without decoding (warehouse.shardcheck)."""

    def __init__(self, stored: pa.Table | pa.RecordBatch, meta: Metadata) -> None:
        self.stored, self.meta = stored, meta

    @cached_property
    def game(self) -> pa.Array:
        return _column(self.stored, "game")

    @cached_property
    def rounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(each game's element offsets, from 0, into the round lengths; the lengths, int16)."""
        offsets, values = _values("rounds", *_binary(self.stored, "rounds"), "<i2")
        return offsets, values.astype(np.int16)

    @cached_property
    def book(self) -> tuple[np.ndarray, int]:
        """(the codebook, int64; the bytes an index takes), checked against the CRC-32."""
        meta = self.meta
        _check(meta)
        raw = _meta(meta, WIDTH)
        width = int(raw) if raw in (b"1", b"2", b"4") else 0
        if not width:
            raise ValueError(f"the codebook's index width {raw!r} is not 1, 2 or 4 bytes")
        book_bytes = _meta(meta, CODEBOOK)
        if len(book_bytes) % 8:
            raise ValueError("the codebook is not a whole number of 8-byte codes")
        book = np.frombuffer(book_bytes, dtype="<i8")
        if width != _width(book.size):  # another width reads the same bytes as other indices
            raise ValueError(
                f"the codebook's {book.size} codes take {_width(book.size)}-byte indices, "
                f"not the {width} the file says"
            )
        return book.astype(np.int64), width

    @cached_property
    def indices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(each game's element offsets, from 0, into the indices; each stored code's index into
        the codebook, unsigned, as stored; the codebook, int64)."""
        book, width = self.book
        offsets, index = _values("codes", *_binary(self.stored, "codes"), _WIDTHS[width])
        if index.size and int(index.max()) >= book.size:
            raise ValueError(
                f"a stored code's index {int(index.max())} is past the codebook's {book.size} codes"
            )
        return offsets, index, book

    def check(self) -> None:
        """Check the file's metadata and every stored column read (a ValueError otherwise), so
        that a damaged file is refused whichever of its columns a query decodes."""
        self.book  # noqa: B018
        read = self.stored.schema.names
        if "rounds" in read:
            self.rounds  # noqa: B018
        if "codes" in read:
            self.indices  # noqa: B018

    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(each game's offsets into the codes; the stored codes, int64)."""
        offsets, index, book = self.indices
        return offsets, book[index]

    def logical(self, name: str) -> pa.Array:
        """A logical events column (EVENTS) as Arrow."""
        if name == "game":
            return self.game
        parts = self.rounds if name == "rounds" else self.codes()
        return _list(*parts, EVENTS.field(name).type)


class StoredRounds:
    """One file's stored rounds as numpy arrays, each checked on first use (a ValueError naming
    what does not fit), and each logical column as numpy (`column`): what `decode` wraps as
    Arrow, and what verify's compiled pass reads without decoding (warehouse.shardcheck)."""

    def __init__(self, stored: pa.Table | pa.RecordBatch, meta: Metadata) -> None:
        self.stored, self.meta = stored, meta

    @cached_property
    def shape(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(each game's round count, each round row's game index, seats): a round row is one
        round of one game, a row per seat once decoded."""
        seat_off, _ = _binary(self.stored, "seats")
        dealer_off, _ = _binary(self.stored, "dealers")
        seats = np.diff(seat_off)
        n = int(seats[0]) if seats.size else 1
        if np.any(seats != n):
            raise ValueError(
                "the stored rounds' games do not all have the same number of seats "
                f"({int(seats.min())} to {int(seats.max())})"
            )
        if n < 1:
            raise ValueError("a stored rounds game has no seats")
        rounds = np.diff(dealer_off)
        return rounds, np.repeat(np.arange(seats.size), rounds), n

    @cached_property
    def cells(self) -> np.ndarray:
        """Each (round, seat)'s cell, int32, in game, round, seat order."""
        rounds, _, n = self.shape
        offsets, values = _values("cells", *_binary(self.stored, "cells"), "<i4")
        if not np.array_equal(np.diff(offsets), rounds * n):
            raise ValueError("a stored rounds row's cells are not one per seat per round")
        return values

    @cached_property
    def seats(self) -> tuple[np.ndarray, list[str]]:
        """(each game's seats' policy indices, games x seats, uint8; the policy names)."""
        _, _, n = self.shape
        _check(self.meta)
        names = _policy_names(_meta(self.meta, POLICIES))
        _, seats = _binary(self.stored, "seats")
        if seats.size and int(seats.max()) >= len(names):
            raise ValueError(
                f"a stored seat's policy {int(seats.max())} is past the {len(names)} names"
            )
        return seats.reshape(-1, n), names

    @cached_property
    def dealers(self) -> np.ndarray:
        """Each round's dealer seat, int8, in game, round order."""
        self.shape  # noqa: B018 (the seats and dealers checked first)
        return _binary(self.stored, "dealers")[1].view(np.int8)

    def check(self) -> None:
        """Check the file's metadata and every stored column read (a ValueError otherwise), so
        that a damaged file is refused whichever of its columns a query decodes."""
        self.seats  # noqa: B018 (the shape, the policy names and the seats)
        self.dealers  # noqa: B018
        if "cells" in self.stored.schema.names:
            self.cells  # noqa: B018

    def column(self, name: str) -> np.ndarray:
        """A logical rounds column (ROUNDS) as numpy; `policy` as indices into `seats`' names."""
        rounds, game_of, n = self.shape
        if name == "game":
            return np.repeat(_np(_column(self.stored, "game"), np.int64), rounds * n)
        if name == "round":
            first = np.zeros(rounds.size, dtype=np.int64)
            np.cumsum(rounds[:-1], out=first[1:])
            return np.repeat((np.arange(game_of.size) - first[game_of] + 1).astype(np.int16), n)
        if name == "seat":
            return np.tile(np.arange(n, dtype=np.int8), game_of.size)
        if name == "policy":
            return self.seats[0][game_of].reshape(-1).astype(np.int32)
        if name == "dealer":
            return np.repeat(self.dealers, n)
        if name == "total":
            return self._totals()
        shift, mask = _CELL_FIELDS[name]
        value = (self.cells >> shift) & mask if mask else self.cells >> shift
        return value.astype(_dtype(ROUNDS.field(name).type), copy=False)

    def logical(self, name: str) -> pa.Array:
        """A logical rounds column (ROUNDS) as Arrow."""
        if name == "policy":
            return arrow.dictionary(self.column(name), self.seats[1])
        return arrow.array(self.column(name), ROUNDS.field(name).type)

    def _totals(self) -> np.ndarray:
        rounds, _, n = self.shape
        by_round = (self.cells >> 4).reshape(-1, n)
        cum = np.cumsum(by_round, axis=0, dtype=np.int64)
        last = np.cumsum(rounds) - 1  # each game's last round row
        before = np.zeros((rounds.size, n), dtype=np.int64)
        if cum.size:  # a game's sums start after the round rows of the games before it
            prev = last[:-1]
            before[1:] = np.where(prev[:, None] >= 0, cum[np.maximum(prev, 0)], 0)
        totals = cum - np.repeat(before, rounds, axis=0)
        return totals.reshape(-1).astype(np.int32)


#: The logical rounds columns kept in a cell: (shift, mask; 0 for no mask).
_CELL_FIELDS = {"score": (4, 0), "busted": (3, 1), "flip7": (2, 1), "status": (0, 3)}


def _dtype(kind: pa.DataType) -> type:
    return np.bool_ if pa.types.is_boolean(kind) else kind.to_pandas_dtype()


def _column(stored: pa.Table | pa.RecordBatch, name: str) -> pa.Array:
    column = stored.column(name)
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column


def _list(offsets: np.ndarray, values: np.ndarray, kind: pa.ListType) -> pa.Array:
    return arrow.list_array(offsets.astype(np.int32), values, kind)
