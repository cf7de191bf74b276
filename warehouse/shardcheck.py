"""verify's compiled pass over one shard: an all-clear for its shard-scope data tests, or not.

`flip7 warehouse verify` runs the shard-scope tests of sql/tests (every round and game rebuilt
from the event log equals the compact tables, every game is whole, every rounds row names the
games table's policy, the rollup equals the one rebuilt from the tables). Run in SQL over every
event they cost several times the CPU that wrote the games. This module makes the same checks,
stricter, in one compiled pass per shard over its files read once with pyarrow (numba,
`cache=True`; a few microseconds a game). It reads the events and rounds as stored
(lakecontract.codec.StoredEvents, StoredRounds), never decoded to rows: each code as its
codebook index, what each codebook entry means worked out once per file (`_codebook`), each
round's cells unpacked in the pass; a file of the older list form is put in that form first.

- the games rows are one per seat 0..n-1, by game then seat, with one winner, ranks that follow
  the totals, and `rounds`, `events` and `capped` repeated on every seat;
- the events file holds one row per game, in the games' order, whose round lengths add up to
  its codes and whose event count is the games table's;
- the rounds rows are rounds 1..R x seats 0..n-1 of each game, in order, whose totals are
  running sums, naming the games table's policy of their seat;
- every (round, seat) rebuilt from the events by the rule of int_rounds_from_events (the
  numbers the seat's events name, x2, the +N modifiers and the FLIP7 bonus; BUST scores 0; the
  status at round end; whether the seat dealt) equals its rounds row, or both are empty; each
  round has one ROUND_START naming a seat and one ROUND_END; GAME_END names the games table's
  winner and its total; each seat's rebuilt total is its games total; ROUND_CAP iff capped;
- the shard's rollup, recomputed from its games and rounds by the pipeline's compiled pass
  (found through the replayer, pipeline.replayer.shard_rollups), equals the stored one row for
  row.

Each condition implies the SQL test's (the SQL compares fingerprints and sums where this pass
compares rows), so a shard that passes here passes there. A shard that does not, or that holds
"With a Vengeance" games (whose rounds this pass does not rebuild), or whose files this pass
cannot read as written, goes to the SQL tests, which name the failing rows: the outcome is the
SQL's, the cost that of the few shards that need it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from lakecontract import codec

#: An element at or above 2^55 is an event with a HIT folded into it (pipeline/schema.py).
HIT_SHIFT = 55
#: The rollups' key columns (one row per shard and key) and the columns compared.
ROLLUP_KEYS = ("grouping", "figure", "policy", "opponent", "key")

#: The sum of the numbers 0..13 whose bits are set, for every set of them (a round's numbers).
NUMBER_SUMS = sum(((np.arange(1 << 14) >> v) & 1) * v for v in range(14)).astype(np.int64)

#: What the pass found, by the reason code it returns (0: all clear).
REASONS = {
    0: "all clear",
    1: "games rows not one per seat by game then seat",
    2: "not one winner",
    3: "rounds, events or capped differ between seats",
    4: "rank does not follow the totals",
    5: "events rows not one per game in the games' order",
    6: "round lengths do not add up to the codes",
    7: "event count differs from the games table's",
    8: "rounds rows not rounds 1..R x seats by game",
    9: "running totals",
    10: "rounds row names another policy than the games table",
    11: "an event names a seat outside the table",
    12: "a round's rebuilt row differs from its rounds row",
    13: "ROUND_START / ROUND_END / rounds",
    14: "GAME_END",
    15: "a seat's rebuilt total differs from its games total",
    16: "capped differs from ROUND_CAP",
}


@dataclass
class Outcome:
    """One shard's outcome: `clear` when every shard-scope test would find nothing; else
    `why` (a REASONS entry, for the curious) and the SQL tests decide. `rollups` is None when
    the rollup was not recomputed here (no compiled pass available): the SQL test does it."""

    clear: bool
    why: str = ""
    rollups: bool | None = None


def _numpy(col: pa.ChunkedArray | pa.Array, dtype: type | None = np.int64) -> np.ndarray:
    """A non-null numeric or boolean column as a numpy array of dtype (None: as stored, no
    copy where Arrow allows; the pass takes each column in its stored type)."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.null_count:
        raise ValueError("nulls")
    if pa.types.is_boolean(arr.type):
        return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=dtype)
    return np.asarray(arr.to_numpy(), dtype=dtype)


def _stored(table: pa.Table, *columns: str) -> list[np.ndarray]:
    """The named columns of a table, each as `_numpy` gives it in its stored type."""
    return [_numpy(table[name], None) for name in columns]


def _codes(col: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """(names, each row's index into them) of a dictionary (or plain) string column."""
    if col.num_chunks != 1 or not pa.types.is_dictionary(col.type):
        col = pa.chunked_array([col.cast(pa.string()).combine_chunks().dictionary_encode()])
    arr = col.chunk(0)
    if arr.null_count:
        raise ValueError("nulls")
    return [str(x) for x in arr.dictionary.to_pylist()], _numpy(arr.indices)


def read(fs: pafs.FileSystem, files: dict[str, str]) -> dict[str, Any]:
    """A shard's four files, read whole, each on this thread (verify reads shards in parallel:
    pyarrow's own threads for one small file measured 2.7x the CPU): the games and rollups as
    tables, the events and rounds as their stored arrays (codec.StoredEvents, StoredRounds),
    checked as the pass reads them. A file of the older list form is put in the stored form
    first (an events or rounds table that cannot be raises a ValueError: SQL's to judge)."""
    out: dict[str, Any] = {}
    for table in ("games", "rounds", "events", "rollups"):
        with fs.open_input_file(files[table]) as f:
            rows = pq.ParquetFile(f).read(use_threads=False)
        if table in codec.STORED:
            if not codec.is_stored(rows.schema, table):
                rows = codec.encode(table, rows)
            parts = codec.StoredEvents if table == "events" else codec.StoredRounds
            out[table] = parts(rows, rows.schema.metadata)
        else:
            out[table] = rows
    return out


def check(
    tables: dict[str, Any],
    players: int,
    rollups: Callable[[pa.Table, codec.StoredRounds, int], pa.Table] | None,
) -> Outcome:
    """Check one shard's files as `read` gives them (see the module docstring)."""
    games = tables["games"]
    rounds: codec.StoredRounds = tables["rounds"]
    events: codec.StoredEvents = tables["events"]
    try:
        variants, _ = _codes(games["variant"])
        if any(v.startswith("vengeance") for v in variants):
            return Outcome(False, "With a Vengeance games: rebuilt by the SQL tests")
        names, g_pol = _codes(games["policy"])
        seats, r_names = rounds.seats
        lookup = np.asarray([names.index(s) if s in names else -1 for s in r_names], np.int64)
        r_pol = lookup[seats.reshape(-1)] if seats.size else np.zeros(0, np.int64)
        r_count, _, r_n = rounds.shape
        r_off, r_len = events.rounds
        c_off, index, book = events.indices
        why = _pass()(
            int(players),
            _numpy(games["game"]),
            _numpy(games["seat"], None),
            g_pol,
            *_stored(games, "rounds", "total", "rank", "winner", "capped", "events"),
            _numpy(rounds.stored.column("game")),
            int(r_n),
            r_pol,
            r_count.astype(np.int64),
            rounds.dealers,
            rounds.cells,
            _numpy(events.game),
            r_off,
            r_len,
            c_off,
            index,
            *_codebook(book),
            NUMBER_SUMS,
        )
    except Exception as exc:  # noqa: BLE001 (columns not as written, of another type: SQL's to judge)
        return Outcome(False, f"not read as written: {exc}")
    if why:
        return Outcome(False, REASONS.get(why, str(why)))
    if rollups is None:
        return Outcome(True)
    try:
        same = same_rollups(rollups(games, rounds, players), tables["rollups"])
    except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
        return Outcome(False, f"rollup not recomputed: {exc}", rollups=False)
    return Outcome(same, "" if same else "the rollup differs from the recomputed one", same)


def _codebook(book: np.ndarray) -> tuple[np.ndarray, ...]:
    """What the pass needs of each codebook entry, worked out once per file rather than once
    per event: whether it is a HIT folded into its event, whether it is a HIT (skipped), its
    player + 1 (0: nobody), the kind and card bits it sets, the points it adds (a +N card
    2 * card - 26, a +N modifier event its value), whether it is a GAME_END, and its value."""
    hit = np.int64(1) << HIT_SHIFT
    folded = book >= hit
    c = np.where(folded, book & (hit - 1), book)
    kind, card, value = c & 31, ((c >> 11) & 63) - 1, c >> 23
    bits = (np.int64(1) << kind) | (np.int64(1) << ((card & 31) + 24))
    extra = np.where((kind == 1) & (card >= 14) & (card <= 18), 2 * card - 26, 0)
    extra = np.where(kind == 13, value, extra)
    return (
        folded.astype(np.int64),
        kind == 2,
        (c >> 5) & 63,
        bits.astype(np.int64),
        extra.astype(np.int64),
        kind == 18,
        value.astype(np.int64),
    )


def sample_games(
    tables: dict[str, pa.Table], first: int, last: int
) -> dict[int, tuple[np.ndarray, tuple[str, ...], int]]:
    """The games first..last of a shard as verify's replay reads them (warehouse.bind, whose
    SQL reads the same from the lake): game -> (its packed codes as stored, HITs unfolded as
    the macro event_codes unfolds them; its seats' policies in seat order; its cell)."""
    games, events = tables["games"], tables["events"]
    g_game = _numpy(games["game"])
    rows = np.flatnonzero((g_game >= first) & (g_game <= last))
    names, pol = _codes(games["policy"])
    seat, cell = _numpy(games["seat"]), _numpy(games["cell"])
    seats: dict[int, list[tuple[int, str]]] = {}
    cells: dict[int, int] = {}
    for i in rows.tolist():
        g = int(g_game[i])
        seats.setdefault(g, []).append((int(seat[i]), names[pol[i]]))
        cells.setdefault(g, int(cell[i]))
    e_game = _numpy(events.game)
    c_off, codes = events.codes()
    logged: dict[int, list[np.ndarray]] = {}
    rows_e = np.flatnonzero((e_game >= first) & (e_game <= last))
    if len(rows_e):
        # the rows' codes unfolded in one go (rows of a shard's block are adjacent as written;
        # else one row at a time), then cut back into rows
        runs = [rows_e] if rows_e[-1] - rows_e[0] == len(rows_e) - 1 else [[i] for i in rows_e]
        for run in runs:
            a, b = int(run[0]), int(run[-1]) + 1
            out, lengths = _unfold(codes[c_off[a] : c_off[b]], np.diff(c_off[a : b + 1]))
            cuts = np.cumsum(lengths)[:-1]
            for i, part in zip(range(a, b), np.split(out, cuts), strict=True):
                logged.setdefault(int(e_game[i]), []).append(part)
    return {
        g: (
            np.concatenate(logged[g]) if g in logged else np.zeros(0, np.int64),
            tuple(p for _, p in sorted(seats[g])),
            cells[g],
        )
        for g in seats
    }


def _unfold(v: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stored codes with each folded HIT put back before its event (the macro event_codes),
    and the new length of each part of `lengths` codes."""
    hit = np.int64(1) << HIT_SHIFT
    folded = v >= hit
    at = np.arange(len(v)) + np.cumsum(folded)  # each event's place, its HIT before it
    out = np.empty(len(v) + int(folded.sum()), np.int64)
    out[at] = np.where(folded, v & (hit - 1), v)
    f = v[folded]
    out[at[folded] - 1] = 2 | (f & 2016) | (((f >> HIT_SHIFT) - 1) << 23)
    ends = np.cumsum(lengths).astype(np.int64)
    seen = np.r_[0, np.cumsum(folded)]  # HITs folded before each place
    per_part = seen[ends] - seen[ends - lengths]
    return out, lengths + per_part


def _canonical(t: pa.Table) -> pa.Table:
    """A rollups table with its strings plain and its rows in key order."""
    cols = {}
    for name in t.column_names:
        col = t[name]
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        cols[name] = col
    plain = pa.table(cols)
    return plain.sort_by([(k, "ascending") for k in ROLLUP_KEYS])


def same_rollups(rebuilt: pa.Table, stored: pa.Table) -> bool:
    """Whether two rollups of a shard hold the same rows (in any order), every column."""
    if rebuilt.equals(stored):  # as the writer wrote it, rows in its order: 0.02 ms, not 1.8
        return True
    if rebuilt.num_rows != stored.num_rows or set(rebuilt.column_names) != set(stored.column_names):
        return False
    a, b = _canonical(rebuilt), _canonical(stored)
    for name in a.column_names:
        x, y = a[name].combine_chunks(), b[name].combine_chunks()
        if x.type != y.type:
            try:
                y = y.cast(x.type)
            except pa.ArrowException:
                return False
        if not x.equals(y):
            return False
    return True


_compiled: Callable[..., int] | None = None


def _pass() -> Callable[..., int]:
    """The compiled pass (numba, cached on disk), built on first use."""
    global _compiled
    if _compiled is None:
        import numba

        _compiled = numba.njit(cache=True, nogil=True)(_shard_pass)
    return _compiled


def _shard_pass(  # type: ignore[no-untyped-def]  # noqa: C901
    n,
    g_game,
    g_seat,
    g_pol,
    g_rounds,
    g_total,
    g_rank,
    g_winner,
    g_capped,
    g_events,
    r_game,
    r_n,
    r_pol,
    r_count,
    r_dealers,
    r_cells,
    e_game,
    r_off,
    r_len,
    c_off,
    index,
    b_folded,
    b_hit,
    b_player,
    b_bits,
    b_extra,
    b_game_end,
    b_value,
    number_sums,
):
    """0 if every condition of the module docstring holds for the shard, else a REASONS code.
    The rounds come as stored (a row per game: its seats' policies, mapped onto the games'
    names, -1 for another; its round count; a dealer per round; a cell per round and seat),
    the events as their codebook indices with what each codebook entry means (_codebook)."""
    rows = len(g_game)
    if n <= 0 or rows % n != 0:
        return 1
    k = rows // n
    if len(e_game) != k:
        return 5
    if r_n != n or len(r_game) != k:
        return 8
    bits = np.zeros(n + 1, np.int64)  # per player (index player + 1) of one round
    extra = np.zeros(n + 1, np.int64)
    gev = np.zeros(n + 1, np.int64)
    has_gev = np.zeros(n + 1, np.bool_)
    seen = np.zeros(n + 1, np.bool_)
    rebuilt_total = np.zeros(n, np.int64)
    won = np.zeros(n, np.bool_)
    running = np.zeros(n, np.int64)
    rd0 = 0  # the game's first round in the rounds file (dealers; cells at rd0 * n)
    for i in range(k):
        base = i * n
        game = g_game[base]
        if i > 0 and game <= g_game[base - 1]:
            return 1
        winners = 0
        winner = -1
        R = g_rounds[base]
        for s in range(n):
            j = base + s
            if g_game[j] != game or g_seat[j] != s:
                return 1
            if g_rounds[j] != R or g_events[j] != g_events[base] or g_capped[j] != g_capped[base]:
                return 3
            if g_winner[j] != 0:
                winners += 1
                winner = s
            higher = 0
            for t in range(n):
                if g_total[base + t] > g_total[j]:
                    higher += 1
            if g_rank[j] != 1 + higher:
                return 4
        if winners != 1:
            return 2
        # the events row
        if e_game[i] != game:
            return 5
        a, b = r_off[i], r_off[i + 1]
        lo, hi = c_off[i], c_off[i + 1]
        total_len = 0
        for q in range(a, b):
            total_len += r_len[q]
        if total_len != hi - lo:
            return 6
        if b - a != R or R <= 0:
            return 13
        # the rounds row: this game's, rounds 1..R, its seats' policies the games table's
        if r_game[i] != game or r_count[i] != R:
            return 8
        for s in range(n):
            if r_pol[base + s] != g_pol[base + s]:
                return 10
            rebuilt_total[s] = 0
            won[s] = False
            running[s] = 0
        game_ends = 0
        game_end_value = 0
        round_caps = 0
        folded = 0
        at = lo
        for rd in range(R):
            for p in range(n + 1):
                bits[p] = 0
                extra[p] = 0
                gev[p] = 0
                has_gev[p] = False
                seen[p] = False
            stop = at + r_len[a + rd]
            while at < stop:
                e = index[at]
                at += 1
                folded += b_folded[e]
                if b_hit[e]:
                    continue
                p = b_player[e]
                if p > n:
                    return 11
                seen[p] = True
                bits[p] |= b_bits[e]
                extra[p] += b_extra[e]
                if b_game_end[e]:
                    v = b_value[e]
                    if not has_gev[p] or v > gev[p]:
                        gev[p] = v
                    has_gev[p] = True
            # nobody's events: ROUND_END once, ROUND_CAP counted
            kinds0 = bits[0] & 16777215
            if not seen[0] or kinds0 & (1 << 16) == 0:
                return 13
            if kinds0 & (1 << 17) != 0:
                round_caps += 1
            starts = 0
            dealer = r_dealers[rd0 + rd]
            for s in range(n):
                cell = r_cells[(rd0 + rd) * n + s]
                r_score = cell >> 4
                r_busted = (cell >> 3) & 1
                r_flip7 = (cell >> 2) & 1
                r_status = cell & 3
                running[s] += r_score
                p = s + 1
                score = 0
                busted = False
                flip7 = False
                status = 0
                dealt = False
                if seen[p]:
                    kinds = bits[p] & 16777215
                    cards = bits[p] >> 24
                    busted = kinds & (1 << 12) != 0
                    flip7 = kinds & (1 << 13) != 0
                    dealt = kinds & 1 != 0
                    if busted:
                        score = 0
                        status = 3
                    else:
                        numbers = number_sums[cards & 16383]
                        if cards & (np.int64(1) << 19) != 0:
                            numbers *= 2
                        score = numbers + extra[p]
                        if kinds & (1 << 7) != 0:
                            status = 2
                        elif kinds & (1 << 3) != 0 or kinds & (1 << 22) != 0:
                            status = 1
                    if kinds & (1 << 18) != 0:
                        game_ends += 1
                        won[s] = True
                        game_end_value = gev[p]
                    if dealt:
                        starts += 1
                    rebuilt_total[s] += score
                table_empty = (
                    r_score == 0
                    and r_busted == 0
                    and r_flip7 == 0
                    and r_status == 0
                    and dealer != s
                )
                rebuilt_empty = (
                    score == 0 and not busted and not flip7 and status == 0 and not dealt
                )
                if not (table_empty and rebuilt_empty):
                    if (
                        r_score != score
                        or (r_busted != 0) != busted
                        or (r_flip7 != 0) != flip7
                        or r_status != status
                        or (dealer == s) != dealt
                    ):
                        return 12
            if starts != 1:
                return 13
        rd0 += R
        if at != hi:
            return 6
        if (hi - lo) + folded + R * n != g_events[base]:
            return 7
        if game_ends != 1 or not won[winner] or game_end_value != g_total[base + winner]:
            return 14
        for s in range(n):
            if rebuilt_total[s] != g_total[base + s] or running[s] != g_total[base + s]:
                return 15
        if (g_capped[base] != 0) != (round_caps > 0):
            return 16
    if rd0 != len(r_dealers):
        return 8
    return 0


def rollup_pass(
    replayer: Any,
) -> Callable[[pa.Table, codec.StoredRounds, int], pa.Table] | None:
    """The pipeline's compiled rollup of a shard, where the replayer offers it."""
    fn = getattr(replayer, "shard_rollups", None)
    return fn if callable(fn) else None
