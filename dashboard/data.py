"""Cached reads of the warehouse: the only place the dashboard touches data.

One warehouse per data root is opened once per server process and kept in a registry of this
module (not `st.cache_resource`: the server's start-up thread, see dashboard/serve.py, opens it
before the first browser session asks). Opening it lists the lake once and screens that listing
(warehouse.lake.screen: each committed file's footer read once), hashes it into a key and loads
the marts already computed for that key from the mart cache on disk (warehouse.cache, in
`--cache-dir`/$FLIP7_CACHE/~/.cache/flip7) into a small in-memory DuckDB: a page whose marts
are all there is answered from it without building the warehouse at all. Any other page opens
the full warehouse (an in-memory DuckDB over the lake's committed shards, marts as views) over
that same listing, and computes each mart it reads into a table once (`_ensure`), storing it in
the mart cache for the next server. A full warehouse opened later (a page whose marts were not
cached) lists the lake again first: when a file or manifest changed since, it is built over the
lake as it is now and the cached marts, another snapshot's, are dropped. After the first page
has run, a background thread computes the marts of the other pages the same way (`prepare`; the
sidebar and the page show its progress).
Query results are cached per plain arguments (`st.cache_data`), so switching pages or widgets
back and forth is a cache hit. Every wrapper takes the data root first, so two lakes never share
a cache entry.

DuckDB connections are not safe to use from two threads at once, and Streamlit runs each
browser session in its own thread; the warehouse's staging views read per-connection variables,
so cursors cannot be used either. A lock per connection serialises the (short) queries instead.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pandas as pd
import streamlit as st

from warehouse import queries
from warehouse.cache import MartCache, open_cached
from warehouse.db import connect
from warehouse.lake import EmptyLakeError, Snapshot, same_listing, screen, snapshot

DATA_ENV = "FLIP7_DATA"
CACHE_ENV = "FLIP7_CACHE"
TTL_S = 3600  # a snapshot does not change; "Reload the lake" clears everything sooner

#: The marts the first page (Field size, with the sidebar's run list) reads.
FIRST_PAGE = ("runs", "win_rates", "points_per_round")
#: Every mart a page reads, in the order `prepare` computes them: the first page's first.
MARTS = (
    *FIRST_PAGE,
    "league",
    "head_to_head",
    "round_distribution",
    "round_rates",
    "card_counting",
    "variant_comparison",
    "sprt_waves",
    "ranking_stops",
    "cell_results",
)
#: Whether the app starts `prepare` after a page has run (tests switch it off to see what a
#: page computes by itself).
PREPARE_IN_BACKGROUND = True


def data_root() -> str:
    """The lake this server shows: $FLIP7_DATA (set by `flip7 dashboard --data`), else ./data;
    a URI (s3://bucket/prefix) as it is, a path made absolute."""
    root = os.environ.get(DATA_ENV) or "data"
    return root if "://" in root else os.path.abspath(root)


@dataclass
class Warehouse:
    """An open lake (or why there is none): the marts loaded from the mart cache (`cached`, in
    `light`), the full warehouse once opened (`con`), and the locks that serialise each."""

    root: str
    lock: threading.Lock = field(default_factory=threading.Lock)  # `con`, `computed`
    empty_reason: str | None = None
    broken: bool = False  # the lake has data the warehouse could not read
    notes: list[str] = field(default_factory=list)  # what every page says about the runs
    cache: MartCache | None = None  # None: nothing is stored (the lake changed while opening)
    listed: Snapshot | None = None  # the listing `cache`'s key was made from, as listed
    lake: tuple[Snapshot, dict[str, str]] | None = None  # that listing screened (lake.screen)
    light: duckdb.DuckDBPyConnection | None = None  # the cached marts, as tables
    light_lock: threading.Lock = field(default_factory=threading.Lock)
    cached: set[str] = field(default_factory=set)  # marts answered from `light`
    con: duckdb.DuckDBPyConnection | None = None  # the full warehouse, opened on first need
    computed: set[str] = field(default_factory=set)  # marts computed into tables of `con`
    worker: threading.Thread | None = None  # `prepare`'s thread
    waiting: int = 0  # page queries waiting for `lock` (the background gives way to them)
    yielding: bool = False  # `lock` is held by a background `prepare` that gives way
    closed: bool = False  # forgotten by `reload`: its thread stops, it stores nothing more

    @property
    def empty(self) -> bool:
        return self.empty_reason is not None


_REGISTRY: dict[str, Warehouse] = {}
_REGISTRY_LOCK = threading.Lock()


def _open(root: str) -> Warehouse:
    """List and screen the lake once, load what the mart cache holds for that listing; open
    the full warehouse over the same listing now unless the first page's marts are all cached
    (it then opens when a page needs it)."""
    wh = Warehouse(root)
    try:
        listed = snapshot(root)
        lake = screen(listed)
        cached = open_cached(root, MARTS, os.environ.get(CACHE_ENV), lake)
        if cached is None:  # no committed shard: connect raises EmptyLakeError saying so
            wh.con = connect(root, lake=lake)
            return wh
        wh.cache, wh.light, wh.cached, wh.notes = (
            cached.cache,
            cached.con,
            cached.marts,
            cached.notes,
        )
        wh.listed, wh.lake = listed, lake
        if not set(FIRST_PAGE) <= wh.cached:
            wh.con = connect(root, lake=lake)  # the snapshot the cache key was made from
    except EmptyLakeError as exc:
        return Warehouse(root, empty_reason=str(exc))
    except (ValueError, OSError, duckdb.Error) as exc:  # a damaged manifest, a store that
        # refuses (no bucket, no credentials): say so, do not crash
        return Warehouse(root, empty_reason=f"{exc.__class__.__name__}: {exc}", broken=True)
    return wh


def _full(wh: Warehouse) -> duckdb.DuckDBPyConnection:
    """The full warehouse of `wh`, opened on first call (hold `wh.lock` or call before sharing
    `wh`). The lake is listed again (a listing reads no footer): unchanged since `wh` was
    listed, the warehouse shows that snapshot; changed, it shows the lake as it is now (only
    the files that changed have their footers read), and the cached marts, which belong to the
    other snapshot, are dropped and nothing more is stored."""
    if wh.con is None:
        assert wh.listed is not None and wh.lake is not None  # set by _open with `cache`
        lake, listed = wh.lake, snapshot(wh.root)
        if not same_listing(listed, wh.listed):
            lake = screen(listed, previous=wh.listed)
            wh.cache, wh.cached = None, set()
        wh.con = connect(wh.root, lake=lake)
    return wh.con


def warehouse(root: str) -> Warehouse:
    """The warehouse over `root`, opened once per server; an empty lake is not an error here."""
    with _REGISTRY_LOCK:
        wh = _REGISTRY.get(root)
        if wh is None:
            wh = _REGISTRY[root] = _open(root)
        return wh


def is_empty(root: str) -> bool:
    """True when the lake has no committed shard (the pages then show how to make one)."""
    return warehouse(root).empty


def empty_reason(root: str) -> str:
    """What the warehouse said when it found nothing to show."""
    return warehouse(root).empty_reason or ""


def is_broken(root: str) -> bool:
    """True when the lake holds data the warehouse could not read (not merely empty)."""
    return warehouse(root).broken


def notes(root: str) -> list[str]:
    """One line per run a reader should be warned about (left out, unverified, stray shards)."""
    return warehouse(root).notes


def reload() -> None:
    """Forget the open warehouses and every cached result (to see shards committed since)."""
    st.cache_data.clear()
    with _REGISTRY_LOCK:
        for wh in _REGISTRY.values():
            wh.closed = True
        _REGISTRY.clear()


def _ensure(wh: Warehouse, marts: Sequence[str]) -> None:
    """Compute each of `marts` into a table once (the view of that name then reads the table)
    and store it in the mart cache; hold `wh.lock`."""
    con = _full(wh)
    for name in marts:
        if name in wh.computed:
            continue
        con.execute(f"CREATE OR REPLACE TABLE {_TABLE}{name} AS SELECT * FROM {name}")
        con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {_TABLE}{name}")
        wh.computed.add(name)
        if wh.cache is not None and not wh.closed and name not in wh.cached:
            wh.cache.store(name, con.sql(f"SELECT * FROM {_TABLE}{name}").to_arrow_table())


_TABLE = "dashboard_mart_"  # prefix of the tables `_ensure` computes


def _query(
    fn: Callable[..., Any], root: str, *args: Any, marts: Sequence[str] = (), **kwargs: Any
) -> Any:
    """`fn(con, *args, **kwargs)` on the root's warehouse: on the cached marts when `marts`
    (those `fn` reads) are all cached, else on the full warehouse once they are computed.
    `marts=()` means `fn` reads the lake itself (a game's events): the full warehouse."""
    wh = warehouse(root)
    if wh.empty:
        raise EmptyLakeError(wh.empty_reason or f"no data under {root}")
    if marts and wh.light is not None and set(marts) <= wh.cached:
        with wh.light_lock:
            return fn(wh.light, *args, **kwargs)
    _acquire_for_page(wh)
    try:
        _ensure(wh, marts)
        assert wh.con is not None
        return fn(wh.con, *args, **kwargs)
    finally:
        wh.lock.release()


#: How often a page waiting for the lock interrupts a background computation again (the
#: interrupt can land between two of its statements and miss).
_INTERRUPT_EVERY_S = 0.2


def _acquire_for_page(wh: Warehouse) -> None:
    """Take `wh.lock` for a page (the caller releases it): while a background `prepare` holds
    it to compute a mart, interrupt that computation (it is done again after the page's
    queries); the background waits meanwhile, as long as any page waits."""
    with _COUNT_LOCK:
        wh.waiting += 1
    try:
        while not wh.lock.acquire(timeout=_INTERRUPT_EVERY_S):
            if wh.yielding and wh.con is not None:
                wh.con.interrupt()
    finally:
        with _COUNT_LOCK:
            wh.waiting -= 1


_COUNT_LOCK = threading.Lock()


def prepare(root: str, marts: Sequence[str] = MARTS, *, give_way: bool = False) -> None:
    """Compute `marts` (those neither cached nor computed yet) one by one, each under the lock.
    With `give_way` (the background thread), a page's query goes first: this waits while a page
    waits for the lock, and a page that asks while a mart is being computed interrupts it (the
    mart is computed again afterwards)."""
    wh = warehouse(root)
    if wh.empty:
        return
    for name in marts:
        while not wh.closed:
            while give_way and wh.waiting:
                time.sleep(0.05)
            with wh.lock:
                if name in wh.cached or name in wh.computed:
                    break
                wh.yielding = give_way
                try:
                    if give_way and wh.waiting:
                        continue  # a page asked in the meantime: after it
                    _ensure(wh, [name])
                    break
                except duckdb.InterruptException:
                    if not give_way:
                        raise
                finally:
                    wh.yielding = False


def _missing(wh: Warehouse) -> list[str]:
    """The marts a page reads that are neither cached nor computed yet."""
    return [] if wh.empty else [m for m in MARTS if m not in wh.cached | wh.computed]


def prepare_in_background(root: str) -> None:
    """Start `prepare(root)` in a daemon thread, once per warehouse and only when some mart is
    missing, PREPARE_DELAY_S from now."""
    wh = warehouse(root)
    with _REGISTRY_LOCK:
        if wh.worker is not None or not _missing(wh):
            return
        wh.worker = threading.Thread(
            target=_prepare_quietly, args=(root,), name="flip7-prepare", daemon=True
        )
    wh.worker.start()


#: The background preparation starts this long after the first page's script has run: the
#: browser is still drawing that page's charts then, on the same cores when both run on one
#: machine.
PREPARE_DELAY_S = 2.0


def _prepare_quietly(root: str) -> None:
    # A failure here shows where a page needs that mart (it then computes it itself and
    # raises there); the thread only stops. Any failure: an uncaught one would print a
    # traceback from a thread nobody waits for (and the lake may be gone: a test's, a bucket).
    time.sleep(PREPARE_DELAY_S)
    try:
        prepare(root, give_way=True)
    except Exception:  # noqa: BLE001
        return


def progress(root: str) -> tuple[int, int] | None:
    """(marts ready, every mart a page reads) while the background preparation runs, else None;
    a mart is ready when cached or computed."""
    wh = warehouse(root)
    if wh.worker is None or not wh.worker.is_alive():
        return None
    return len(set(MARTS) & (wh.cached | wh.computed)), len(MARTS)


def readiness(root: str) -> tuple[int, int] | None:
    """(marts ready, every mart a page reads) while any is missing, else None: what a page
    shows while it may wait for a mart to be computed."""
    wh = warehouse(root)
    missing = _missing(wh)
    return (len(MARTS) - len(missing), len(MARTS)) if missing else None


def _list(values: Sequence[str] | None) -> list[str] | None:
    return list(values) if values else None


@st.cache_data(ttl=TTL_S, show_spinner=False)
def runs(root: str) -> pd.DataFrame:
    """One row per run: status, ruleset, variant, sizes, field sizes, policies."""
    return _query(queries.runs, root, marts=("runs",))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def lineups(root: str, run: str, players: int | None = None) -> list[str]:
    """The run's line-up labels (those played at `players` when given), line-ups over more
    field sizes first: the cells a page can show."""
    df = _query(queries.lineups, root, runs=[run], marts=("win_rates",))
    if players is not None:
        df = df[[int(players) in {int(p) for p in sizes} for sizes in df["field_sizes"]]]
    return [str(x) for x in df["lineup"]]


@st.cache_data(ttl=TTL_S, show_spinner=False)
def field_size(
    root: str, run: str, policies: tuple[str, ...] = (), lineup: str | None = None
) -> pd.DataFrame:
    """Win rate, win index and points per round per cell (field size of `lineup`) and policy."""
    return _query(
        queries.field_size,
        root,
        runs=[run],
        policies=_list(policies),
        lineup=lineup,
        marts=("win_rates", "points_per_round"),
    )


def comparison_label(counting: str, base: str, lineup: str, base_lineup: str) -> str:
    """`evc vs ev` plus the cells compared: `(ev mix)`, or `(evc line-up vs ev line-up)`."""
    cells = lineup if lineup == base_lineup else f"{lineup} vs {base_lineup}"
    return f"{counting} vs {base} ({cells})"


@st.cache_data(ttl=TTL_S, show_spinner=False)
def card_counting(root: str, run: str, comparisons: tuple[str, ...] = ()) -> pd.DataFrame:
    """Counting policies against their twins per field size of one run, with a `comparison`
    label naming the policies and the cells ("evc vs ev (evc vs ev)"); `comparisons` keeps only
    those labels (all when empty)."""
    df = _query(queries.card_counting, root, runs=[run], marts=("card_counting",))
    labels = [
        comparison_label(*row)
        for row in zip(df["counting"], df["base"], df["lineup"], df["base_lineup"], strict=True)
    ]
    df = df.assign(comparison=pd.Series(labels, index=df.index, dtype=object))
    return df[df["comparison"].isin(comparisons)] if comparisons else df


@st.cache_data(ttl=TTL_S, show_spinner=False)
def league(root: str, run: str, policies: tuple[str, ...] = ()) -> pd.DataFrame:
    """The league table of one run (ranked against every policy), rows of `policies` only."""
    df = _query(queries.league, root, runs=[run], marts=("league",))
    return df[df["policy"].isin(policies)] if policies else df


def _in_cell(
    fn: Callable[..., Any],
    mart: str,
    root: str,
    run: str,
    players: int,
    lineup: str | None,
    policies: tuple[str, ...],
) -> pd.DataFrame:
    """`fn` (a query of `mart`) over one cell of one run: its field size and line-up, the rows
    of `policies` (all when empty)."""
    return _query(
        fn,
        root,
        marts=(mart,),
        runs=[run],
        players=players,
        lineup=lineup,
        policies=_list(policies),
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def head_to_head(
    root: str, run: str, players: int, lineup: str | None, policies: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Head-to-head shares among `policies` in one cell (field size and line-up)."""
    return _in_cell(queries.head_to_head, "head_to_head", root, run, players, lineup, policies)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def round_distribution(
    root: str, run: str, players: int, lineup: str | None, policies: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Round-score distributions per policy in one cell of one run."""
    return _in_cell(
        queries.round_distribution, "round_distribution", root, run, players, lineup, policies
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def rates(
    root: str, run: str, players: int, lineup: str | None, policies: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Bust, Flip 7, stay and freeze rates per policy in one cell of one run."""
    return _in_cell(queries.rates, "round_rates", root, run, players, lineup, policies)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def games(root: str, run: str, limit: int, policies: tuple[str, ...] = ()) -> pd.DataFrame:
    """The first `limit` logged games of a run, those seating one of `policies` when given."""
    df = _query(queries.games, root, run, limit)
    if not policies:
        return df
    wanted = set(policies)
    return df[[bool(wanted & set(str(lu).split(","))) for lu in df["lineup"]]]


class UnreadableGameError(ValueError):
    """A game whose rows in the lake cannot be read (a file that does not decode): the message
    names the file and what is wrong with it."""


@st.cache_data(ttl=TTL_S, show_spinner=False)
def game_timeline(root: str, run: str, game: int) -> pd.DataFrame:
    """Every event of one game in order; UnreadableGameError if its files cannot be read."""
    try:
        return _query(queries.game_timeline, root, run, game)
    except duckdb.InvalidInputException as exc:  # a stored file that does not decode
        raise UnreadableGameError(_reading_error(exc)) from None


def _reading_error(exc: duckdb.Error) -> str:
    """DuckDB's error for a Python error raised while it read a table (a lake file that does
    not decode: warehouse.db names the file) as that error's message alone."""
    text = str(exc).split(". Detail: Python exception:", 1)[0]
    return text.split(" failed: Invalid: ", 1)[-1].splitlines()[0]


@st.cache_data(ttl=TTL_S, show_spinner=False)
def variant_comparison(
    root: str,
    players: int | None = None,
    lineup: str | None = None,
    ruleset: str | None = None,
    seating: str | None = None,
) -> pd.DataFrame:
    """Each policy's points, bust and Flip 7 rates and win index per variant, per cell without
    its run (variant, ruleset, field size, line-up label and seating; pooled over the runs that
    played it)."""
    return _query(
        queries.variant_comparison,
        root,
        players=players,
        lineup=lineup,
        ruleset=ruleset,
        seating=seating,
        marts=("variant_comparison",),
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def variant_round_distribution(
    root: str,
    players: int | None = None,
    policies: tuple[str, ...] = (),
    lineup: str | None = None,
    ruleset: str | None = None,
    seating: str | None = None,
) -> pd.DataFrame:
    """Round-score shares per variant, ruleset and seating (never added together), over the
    chosen policies (all when empty)."""
    return _query(
        queries.variant_round_distribution,
        root,
        marts=("round_distribution", "variant_comparison"),
        policies=_list(policies),
        players=players,
        lineup=lineup,
        ruleset=ruleset,
        seating=seating,
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def sprt_waves(root: str, run: str) -> pd.DataFrame:
    """Every look of one run's sequential test (empty for a run without one)."""
    return _query(queries.sprt_waves, root, run, marts=("sprt_waves",))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def ranking_stops(root: str, run: str) -> pd.DataFrame:
    """A league's ranking test: each adjacent pair's verdict at the deciding (else the last)
    look (empty for a run without one)."""
    return _query(queries.ranking_stops, root, run, marts=("ranking_stops",))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def game_ids(root: str, run: str) -> tuple[int, int, int] | None:
    """(lowest, highest, how many) of a run's logged game ids; None when it has none."""
    ids: tuple[int, int, int] | None = _query(queries.game_ids, root, run)
    return ids


@st.cache_data(ttl=TTL_S, show_spinner=False)
def game(root: str, run: str, game: int) -> pd.DataFrame:
    """One logged game's row (empty when the run has no game of that id)."""
    return _query(queries.game, root, run, game)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def cell_results(root: str, run: str) -> pd.DataFrame:
    """Per cell of the run, all seats pooled: rounds per game, points per round, bust and Flip 7
    rates with their intervals (the Rule choices page)."""
    return _query(queries.cell_results, root, runs=[run], marts=("cell_results",))
