"""The card-counting mart's per-game products, streamed from the shards' rollups in bounded memory.

A paired comparison (a counting policy against its twin, on common random numbers) and a
comparison of two policies at one table need, besides each side's own sums (in the rollups),
the sums of products of the two sides' per-game figures: sum y_c y_b, y_c n_b, n_c y_b, n_c n_b
over the pairs of games dealt the same shuffles. Those cross two shards (one per cell) and the
rollups keep them as per-game lists (`game_y`, `game_n` of grouping 'policy', figures 'win' and
'points'). Joining every shard's lists with its partner's in SQL held one side's lists of the
whole run in memory (3.8 GB at 10M games); here the shards are read group by group instead:
the rollups files of one run and one first game (the cell's game a shard starts at, as its
manifest's shard record says and its file confirms), so that a shard meets its partners (the
other cells' shards of the same games) while only that group's lists are in memory.

`moments(snap)` gives one row per (run, cell_c, counting, cell_b, base, figure): every counting
policy of a cell (a name like another plus 'c', the rule of marts/card_counting.sql) beside
its twin in the same cell or in a cell of the same CRN pair (as the manifest's line-ups say:
the shards of other cells are not read), with g (the pairs of games) and
the fifteen sums card_counting's interval is computed from. The mart keeps the comparisons it
makes and joins them to these rows. As in the SQL it replaces, a shard is paired with the other
side's shard of the same first game and length (`aligned`); a shard with none (cells split
into shards otherwise) is paired game by game on the cell's game (`unaligned`: its files are
read again, and its games held, for those comparisons only). Every term is an integer, and the
sums of doubles are exact below 2^53: the figures are the SQL's to the last bit.

`TwinMoments` hands the rows to DuckDB lazily (`lake_twin_moments`, see warehouse.build): they
are computed on the first query that reads them and kept for the connection's snapshot.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.lake import Snapshot
from warehouse.rollups import prefetch

#: A counting policy's name: its twin's with 'c' after the name's first word (evc -> ev,
#: bustc:0.25 -> bust:0.25); the same pattern as marts/card_counting.sql (a test keeps them
#: equal).
COUNTING = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)c(:|$)")
FIGURES = ("win", "points")
SUMS = (
    "syc",
    "snc",
    "syb",
    "snb",
    "ycyc",
    "ncnc",
    "ycnc",
    "ybyb",
    "nbnb",
    "ybnb",
    "ycyb",
    "ycnb",
    "ncyb",
    "ncnb",
)
SCHEMA = pa.schema(
    [
        pa.field("run", pa.string()),
        pa.field("cell_c", pa.int32()),
        pa.field("counting", pa.string()),
        pa.field("cell_b", pa.int32()),
        pa.field("base", pa.string()),
        pa.field("figure", pa.string()),
        pa.field("g", pa.int64()),
        *(pa.field(name, pa.float64()) for name in SUMS),
    ]
)
COLUMNS = ["cell", "first_game", "grouping", "figure", "policy", "game_y", "game_n"]


def twin(policy: str) -> str:
    """The non-counting twin of a counting policy's name; the name itself for any other."""
    return COUNTING.sub(r"\1\2", policy, count=1)


# One list: (cell, policy, figure, first game, ys, ns) of one rollups row.
Entry = tuple[int, str, str, int, np.ndarray, np.ndarray]
# A comparison: (run, cell_c, counting, cell_b, base, figure).
Key = tuple[str, int, str, int, str, str]


def products(yc: np.ndarray, nc: np.ndarray, yb: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """The fifteen sums (g first) of one pairing of games, in SUMS order after g."""
    return np.array(
        [
            len(yc),
            yc.sum(),
            nc.sum(),
            yb.sum(),
            nb.sum(),
            yc @ yc,
            nc @ nc,
            yc @ nc,
            yb @ yb,
            nb @ nb,
            yb @ nb,
            yc @ yb,
            yc @ nb,
            nc @ yb,
            nc @ nb,
        ],
        dtype=np.float64,
    )


def read_lists(snap: Snapshot, path: str) -> list[Entry]:
    """The per-game lists of one rollups file (grouping 'policy', figures win and points)."""
    with snap.fs.open_input_file(path) as f:
        # less CPU: one thread for a small file, a local one not first buffered
        t = pq.ParquetFile(f, pre_buffer=not snap.local).read(columns=COLUMNS, use_threads=False)
    return lists_of(t)


def lists_of(t: pa.Table) -> list[Entry]:
    """The per-game lists of a rollups file's rows read into `t` (it holds at least COLUMNS)."""
    figure = _strings(t["figure"])
    rows = np.flatnonzero((_strings(t["grouping"]) == "policy") & np.isin(figure, FIGURES))
    if not len(rows):
        return []
    cell = t["cell"].to_numpy()
    first = t["first_game"].to_numpy()
    policy = _strings(t["policy"])
    lists = []
    for name in ("game_y", "game_n"):
        col = t[name].combine_chunks()
        offsets = col.offsets.to_numpy()
        values = col.values.to_numpy(zero_copy_only=False).astype(np.float64)
        lists.append([values[offsets[i] : offsets[i + 1]] for i in rows])
    return [
        (int(cell[i]), str(policy[i]), str(figure[i]), int(first[i]), y, n)
        for i, y, n in zip(rows, *lists, strict=True)
    ]


def _strings(column: pa.ChunkedArray) -> np.ndarray:
    """A (dictionary-encoded) string column as a numpy array of str objects, decoded through
    its few dictionary values."""
    out = []
    for chunk in column.chunks:
        if pa.types.is_dictionary(chunk.type):
            names = np.array(chunk.dictionary.to_pylist(), dtype=object)
            out.append(names[chunk.indices.to_numpy(zero_copy_only=False)])
        else:
            out.append(np.array(chunk.to_pylist(), dtype=object))
    return np.concatenate(out) if out else np.zeros(0, object)


Paths = dict[tuple[str, int], list[tuple[str, int | None]]]


def plan(snap: Snapshot) -> Paths:
    """{(run, players): [(rollups file, the cell's game it starts at, or None)]}: the files
    `moments` reads, with their manifest's hint (None without one)."""
    runs: Paths = defaultdict(list)
    for run, (starts, skip) in _hints(snap).items():
        for s in snap.shards:
            if s.run == run and snap.exists(s.files["rollups"]) and s.shard not in skip:
                runs[(run, s.players)].append((s.files["rollups"], starts.get(s.shard)))
    for s in snap.shards:  # runs without a manifest (a snapshot of some shards): no hint
        if s.run not in snap.manifests and snap.exists(s.files["rollups"]):
            runs[(s.run, s.players)].append((s.files["rollups"], None))
    return runs


def moments(snap: Snapshot) -> pa.Table:
    """Every counting policy beside its twin, per figure: g and the sums of SUMS (see the module
    docstring), over each run of the snapshot's rollups files."""
    acc: dict[Key, np.ndarray] = {}
    for (run, _players), paths in sorted(plan(snap).items()):
        try:
            part = _run_moments(snap, run, paths)
        except _Misplaced:  # a manifest that does not say where the shards start: no hint
            part = _run_moments(snap, run, [(p, None) for p, _ in paths])
        acc.update(part)
    return _table(acc)


def _table(acc: dict[Key, np.ndarray]) -> pa.Table:
    """The comparisons' sums as rows of SCHEMA, in key order."""
    keys = sorted(acc)
    cols: dict[str, Any] = {
        name: [k[i] for k in keys]
        for i, name in enumerate(("run", "cell_c", "counting", "cell_b", "base", "figure"))
    }
    values = np.array([acc[k] for k in keys]).reshape(len(keys), 1 + len(SUMS))
    cols["g"] = values[:, 0].astype(np.int64)
    for j, name in enumerate(SUMS, 1):
        cols[name] = values[:, j]
    return pa.table(cols, schema=SCHEMA)


class _Misplaced(Exception):
    """A rollups file does not start at the game its manifest's shard record says."""


def _hints(snap: Snapshot) -> dict[str, tuple[dict[int, int], set[int]]]:
    """{run: ({shard: the cell's game it starts at}, {shards not to read})} from the manifests:
    the shard records' `start` (what the rollups' `first_game` holds) and, from the cells'
    line-ups, the shards of cells where no counting policy meets its twin (in the cell, or in
    a cell of the same CRN pair: the only comparisons card_counting pairs game by game). A
    manifest that cannot be read gives no hint."""
    out: dict[str, tuple[dict[int, int], set[int]]] = {}
    for run, path in snap.manifests.items():
        try:
            m = snap.read_json(path)
            shards = m["shards"]  # type: ignore[index]
            starts = {int(k): int(v["start"]) for k, v in shards.items()}
            cells = {
                int(c["cell"]): (int(c["players"]), int(c["pair"]), set(c["lineup"]))
                for c in m["cells"]  # type: ignore[index]
            }
            wanted = set()
            for a, (players, pair, lineup) in cells.items():
                for b, (players_b, pair_b, lineup_b) in cells.items():
                    if players == players_b and (a == b or pair == pair_b):
                        if any(twin(p) != p and twin(p) in lineup_b for p in lineup):
                            wanted |= {a, b}
            skip = {int(k) for k, v in shards.items() if int(v["cell"]) not in wanted}
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            starts, skip = {}, set()
        out[run] = (starts, skip)
    return out


def _run_moments(
    snap: Snapshot, run: str, paths: list[tuple[str, int | None]]
) -> dict[Key, np.ndarray]:
    """One run's (one field size's) comparisons: the files of each first game together, in the
    order of their manifest's hint (files without one are read first and held); _Misplaced
    when a file does not start where its hint says."""
    pairs = _Pairs(snap, run)
    groups: dict[int, list[str]] = defaultdict(list)
    for path, start in paths:
        if start is None:
            pairs.hold(path, read_lists(snap, path))
        else:
            groups[start].append(path)
    firsts = sorted(groups)

    def group(paths: list[str]) -> list[tuple[str, list[Entry]]]:
        return [(p, read_lists(snap, p)) for p in paths]

    batches = prefetch(group, [groups[f] for f in firsts], ahead=2)
    for first, read in zip(firsts, batches, strict=True):
        pairs.group(first, read)
    return pairs.finish()


class _Pairs:
    """One run's (one field size's) comparisons, summed as the files of each first game come
    (`group`): every term is an integer, so the sums are the same in any order."""

    def __init__(self, snap: Snapshot, run: str) -> None:
        self.snap = snap
        self.run = run
        self.acc: dict[Key, np.ndarray] = {}
        # the lists of files without a hint, by their first game
        self.odd: dict[int, list[tuple[Entry, str]]] = defaultdict(list)
        # Where each list is (cell, policy, figure) -> [(first game, file)], and which
        # comparisons paired which first games.
        self.where: dict[tuple[int, str, str], list[tuple[int, str]]] = defaultdict(list)
        self.aligned: set[tuple[Key, int]] = set()

    def hold(self, path: str, entries: list[Entry]) -> None:
        """Keep the lists of a file without a hint until its first game's group comes."""
        for e in entries:
            self.odd[e[3]].append((e, path))

    def group(self, first: int, read: list[tuple[str, list[Entry]]]) -> None:
        """Add the products of the files hinted to start at `first` and of the held lists of
        that first game; _Misplaced when one of the files starts elsewhere."""
        entries = [(e, p) for p, lists in read for e in lists]
        if any(e[3] != first for e, _ in entries):
            raise _Misplaced
        entries += self.odd.pop(first, [])
        by_policy: dict[tuple[str, str], list[Entry]] = defaultdict(list)
        for e, p in entries:
            self.where[(e[0], e[1], e[2])].append((e[3], p))
            by_policy[(e[1], e[2])].append(e)
        acc = self.acc
        for c, _ in entries:
            base = twin(c[1])
            if base == c[1]:
                continue
            for b in by_policy.get((base, c[2]), ()):
                if len(b[4]) != len(c[4]):
                    continue
                key = (self.run, c[0], c[1], b[0], b[1], c[2])
                sums = products(c[4], c[5], b[4], b[5])
                acc[key] = acc[key] + sums if key in acc else sums
                self.aligned.add((key, c[3]))

    def finish(self) -> dict[Key, np.ndarray]:
        """The run's sums: the held lists of first games no hinted file starts at, then the
        lists with no partner of their comparison at their first game, paired game by game."""
        for first in sorted(self.odd):
            self.group(first, [])
        where = self.where
        for (cell_c, counting, figure), c_lists in list(where.items()):
            base = twin(counting)
            if base == counting:
                continue
            for (cell_b, policy, fig), b_lists in list(where.items()):
                if policy != base or fig != figure:
                    continue
                key = (self.run, cell_c, counting, cell_b, base, figure)
                lone_c = [x for x in c_lists if (key, x[0]) not in self.aligned]
                lone_b = [x for x in b_lists if (key, x[0]) not in self.aligned]
                if lone_c and lone_b:
                    _unaligned(self.snap, key, lone_c, lone_b, self.acc)
        return self.acc


def _unaligned(
    snap: Snapshot,
    key: Key,
    lone_c: list[tuple[int, str]],
    lone_b: list[tuple[int, str]],
    acc: dict[Key, np.ndarray],
) -> None:
    """One comparison's unaligned lists, paired on the cell's game (as the SQL's inner join of
    the two sides' games: every c game with every b game of the same cell game)."""
    _, cell_c, counting, cell_b, base, figure = key

    def games(
        cell: int, policy: str, lists: Iterable[tuple[int, str]]
    ) -> dict[int, list[tuple[float, float]]]:
        out: dict[int, list[tuple[float, float]]] = defaultdict(list)
        firsts = {f for f, _ in lists}
        for path in sorted({p for _, p in lists}):
            for e in read_lists(snap, path):
                if (e[0], e[1], e[2]) == (cell, policy, figure) and e[3] in firsts:
                    for i, (y, n) in enumerate(zip(e[4], e[5], strict=True)):
                        out[e[3] + i].append((y, n))
        return out

    c_games = games(cell_c, counting, lone_c)
    b_games = games(cell_b, base, lone_b)
    yc, nc, yb, nb = [], [], [], []
    for game in sorted(set(c_games) & set(b_games)):
        for y1, n1 in c_games[game]:
            for y2, n2 in b_games[game]:
                yc.append(y1)
                nc.append(n1)
                yb.append(y2)
                nb.append(n2)
    if yc:
        sums = products(*(np.array(v, dtype=np.float64) for v in (yc, nc, yb, nb)))
        acc[key] = acc[key] + sums if key in acc else sums


class Fold:
    """`moments(snap)` computed from the rollups files as another reader hands them over
    (`add`), so that each file is read once: the rollups rows' stream at connect
    (warehouse.rollups.RollupRows) reads the files in `rank` order (a run's files without a
    hint first, then those of each first game together), adds each, and calls `done` after the
    last; then `table` holds the rows. Memory holds one first game's lists at a time (and the
    files without a hint), as `moments` does. A run whose manifest misplaces a shard is read
    again without hints at `done`, as `moments` would."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.plan = plan(snap)
        self.hint = {p: (key, start) for key, paths in self.plan.items() for p, start in paths}
        self.pairs = {key: _Pairs(snap, key[0]) for key in self.plan}
        self.misplaced: set[tuple[str, int]] = set()
        # the first game being gathered: (run and field size, first game, its files' lists)
        self.gathering: tuple[tuple[str, int], int, list[tuple[str, list[Entry]]]] | None = None
        self.table: pa.Table | None = None

    def rank(self, path: str) -> tuple[int, tuple[str, int], int, int]:
        """Where `path` goes in the order files are to be added (files no comparison reads
        last, in any order)."""
        if path not in self.hint:
            return (1, ("", 0), 0, 0)
        key, start = self.hint[path]
        return (0, key, start is not None, start or 0)

    def wants(self, path: str) -> bool:
        """Whether a comparison reads the lists of `path` (as `moments` would)."""
        return path in self.hint

    def take(self, table: pa.Table) -> list[Entry]:
        """The lists of one rollups file's rows (at least COLUMNS), in any thread."""
        return lists_of(table)

    def add(self, path: str, taken: object) -> None:
        """One wanted rollups file's lists (`take`), in `rank` order."""
        key, start = self.hint[path]
        entries: list[Entry] = taken  # type: ignore[assignment]
        if key in self.misplaced:
            return
        if start is None:
            self.pairs[key].hold(path, entries)
            return
        if self.gathering is not None and self.gathering[:2] != (key, start):
            self._pair()
        if self.gathering is None:
            self.gathering = (key, start, [])
        self.gathering[2].append((path, entries))

    def _pair(self) -> None:
        assert self.gathering is not None
        key, start, read = self.gathering
        self.gathering = None
        try:
            self.pairs[key].group(start, read)
        except _Misplaced:
            self.misplaced.add(key)

    def done(self) -> None:
        """Every file added: sum the rest (see `_Pairs.finish`) into `table`."""
        if self.gathering is not None:
            self._pair()
        acc: dict[Key, np.ndarray] = {}
        for key, paths in sorted(self.plan.items()):
            if key in self.misplaced:
                acc.update(_run_moments(self.snap, key[0], [(p, None) for p, _ in paths]))
            else:
                acc.update(self.pairs[key].finish())
        self.table = _table(acc)
        self.pairs = {}


class TwinMoments:
    """`moments(snap)` as a relation DuckDB can scan (`con.register(name, TwinMoments(snap))`):
    its schema is known without reading anything, its rows are computed on the first scan and
    kept for later ones; with a `fold` that the rollups' pass completed, its rows instead."""

    def __init__(self, snap: Snapshot, fold: Fold | None = None) -> None:
        self.snap = snap
        self.fold = fold
        self.table: pa.Table | None = None

    def __arrow_c_schema__(self) -> object:
        return SCHEMA.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        if self.table is None:
            folded = self.fold.table if self.fold is not None else None
            self.table = folded if folded is not None else moments(self.snap)
        return self.table.__arrow_c_stream__(requested_schema)
