"""Cached reads of the warehouse: the only place the dashboard touches data.

One read-only warehouse per data root is opened once per server process (`st.cache_resource`):
an in-memory DuckDB over the lake's committed shards, its marts as views. Each mart is computed
into a table the first time a page asks for it (`_ensure`), so the first page of a new server
waits only for its own marts, not for every mart of the lake, and every later query reads
small tables. Query results are cached per
plain arguments (`st.cache_data`), so switching pages or widgets back and forth is a cache hit.
Every wrapper takes the data root first, so two lakes never share a cache entry.

DuckDB connections are not safe to use from two threads at once, and Streamlit runs each
browser session in its own thread; the warehouse's staging views read per-connection variables,
so cursors cannot be used either. A lock serialises the (short) queries instead.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pandas as pd
import streamlit as st

from warehouse import queries
from warehouse.db import connect
from warehouse.lake import EmptyLakeError

DATA_ENV = "FLIP7_DATA"
TTL_S = 3600  # a snapshot does not change; "Reload the lake" clears everything sooner


def data_root() -> str:
    """The lake this server shows: $FLIP7_DATA (set by `flip7 dashboard --data`), else ./data;
    a URI (s3://bucket/prefix) as it is, a path made absolute."""
    root = os.environ.get(DATA_ENV) or "data"
    return root if "://" in root else os.path.abspath(root)


@dataclass(frozen=True)
class Warehouse:
    """An open warehouse (or why there is none) and the lock that serialises its queries."""

    con: duckdb.DuckDBPyConnection | None
    lock: threading.Lock
    empty_reason: str | None = None
    broken: bool = False  # the lake has data the warehouse could not read
    computed: set[str] = field(default_factory=set)  # marts computed into tables so far


@st.cache_resource(show_spinner="Opening the lake ...")
def warehouse(root: str) -> Warehouse:
    """The warehouse over `root`, opened once per server; an empty lake is not an error here.
    Its marts are views until a page first needs them (`_ensure`)."""
    try:
        con = connect(root, materialize=False)
    except EmptyLakeError as exc:
        return Warehouse(None, threading.Lock(), str(exc))
    except (ValueError, OSError, duckdb.Error) as exc:  # a damaged manifest, a store that
        # refuses (no bucket, no credentials): say so, do not crash
        return Warehouse(None, threading.Lock(), f"{exc.__class__.__name__}: {exc}", broken=True)
    return Warehouse(con, threading.Lock())


def is_empty(root: str) -> bool:
    """True when the lake has no committed shard (the pages then show how to make one)."""
    return warehouse(root).con is None


def empty_reason(root: str) -> str:
    """What the warehouse said when it found nothing to show."""
    return warehouse(root).empty_reason or ""


def is_broken(root: str) -> bool:
    """True when the lake holds data the warehouse could not read (not merely empty)."""
    return warehouse(root).broken


def reload() -> None:
    """Forget the open warehouse and every cached result (to see shards committed since)."""
    st.cache_data.clear()
    warehouse.clear()


def _ensure(wh: Warehouse, marts: Sequence[str]) -> None:
    """Compute each of `marts` into a table once (the view of that name then reads the table),
    under the warehouse's lock. What materialize=True did for every mart at once, per mart."""
    assert wh.con is not None
    for name in marts:
        if name in wh.computed:
            continue
        wh.con.execute(f"CREATE OR REPLACE TABLE {_TABLE}{name} AS SELECT * FROM {name}")
        wh.con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {_TABLE}{name}")
        wh.computed.add(name)


_TABLE = "dashboard_mart_"  # prefix of the tables `_ensure` computes


def _query(
    fn: Callable[..., Any], root: str, *args: Any, marts: Sequence[str] = (), **kwargs: Any
) -> Any:
    """`fn(con, *args, **kwargs)` on the root's warehouse once `marts` (those `fn` reads) are
    computed."""
    wh = warehouse(root)
    if wh.con is None:
        raise EmptyLakeError(wh.empty_reason or f"no data under {root}")
    with wh.lock:
        _ensure(wh, marts)
        return fn(wh.con, *args, **kwargs)


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


@st.cache_data(ttl=TTL_S, show_spinner=False)
def head_to_head(
    root: str, run: str, players: int, lineup: str | None, policies: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Head-to-head shares among `policies` in one cell (field size and line-up)."""
    return _query(
        queries.head_to_head,
        root,
        marts=("head_to_head",),
        runs=[run],
        players=players,
        policies=_list(policies),
        lineup=lineup,
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def round_distribution(
    root: str, run: str, players: int, lineup: str | None, policies: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Round-score distributions per policy in one cell of one run."""
    return _query(
        queries.round_distribution,
        root,
        marts=("round_distribution",),
        runs=[run],
        policies=_list(policies),
        players=players,
        lineup=lineup,
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def rates(
    root: str, run: str, players: int, lineup: str | None, policies: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Bust, Flip 7, stay and freeze rates per policy in one cell of one run."""
    return _query(
        queries.rates,
        root,
        runs=[run],
        policies=_list(policies),
        players=players,
        lineup=lineup,
        marts=("round_rates",),
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def games(root: str, run: str, limit: int, policies: tuple[str, ...] = ()) -> pd.DataFrame:
    """The first `limit` logged games of a run, those seating one of `policies` when given."""
    df = _query(queries.games, root, run, limit)
    if not policies:
        return df
    wanted = set(policies)
    return df[[bool(wanted & set(str(lu).split(","))) for lu in df["lineup"]]]


@st.cache_data(ttl=TTL_S, show_spinner=False)
def game_timeline(root: str, run: str, game: int) -> pd.DataFrame:
    """Every event of one game in order."""
    return _query(queries.game_timeline, root, run, game)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def variant_comparison(
    root: str, players: int | None = None, lineup: str | None = None
) -> pd.DataFrame:
    """Each policy's points, bust and Flip 7 rates and win index per variant, per cell without
    its run (pooled over the runs that played it)."""
    return _query(
        queries.variant_comparison,
        root,
        players=players,
        lineup=lineup,
        marts=("variant_comparison",),
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def variant_round_distribution(
    root: str,
    players: int | None = None,
    policies: tuple[str, ...] = (),
    lineup: str | None = None,
) -> pd.DataFrame:
    """Round-score shares per variant, pooled over the chosen policies (all when empty)."""
    return _query(
        queries.variant_round_distribution,
        root,
        marts=("round_distribution",),
        policies=_list(policies),
        players=players,
        lineup=lineup,
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def sprt_waves(root: str, run: str) -> pd.DataFrame:
    """Every look of one run's sequential test (empty for a run without one)."""
    return _query(queries.sprt_waves, root, run, marts=("sprt_waves",))


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
