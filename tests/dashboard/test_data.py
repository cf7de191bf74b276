"""The data layer's mart cache and background preparation: a new server over an unchanged lake
draws the first page from the cache without building the warehouse, with the same numbers; a
damaged, planted or stale entry is never shown; the other pages' marts are prepared after the
first page."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pandas as pd
import pytest

from dashboard import data, serve
from tests.dashboard.lake import FIELD_SPEC, OTHER_SPEC, write_run
from tests.dashboard.test_app import open_app
from warehouse import cache
from warehouse import db as warehouse_db
from warehouse import lake as warehouse_lake
from warehouse.lake import snapshot


@pytest.fixture
def field_lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    write_run(FIELD_SPEC, root)
    return root


def entry(root: Path) -> cache.MartCache:
    wh = data.warehouse(str(root))
    assert wh.cache is not None
    return wh.cache


def no_warehouse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make building the full warehouse fail loudly: what runs now must come from the cache."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the full warehouse was built")

    monkeypatch.setattr(data, "connect", refuse)


def field_size(root: Path) -> pd.DataFrame:
    return data.field_size(str(root), "field", lineup="field size")


def test_a_new_server_draws_the_first_page_from_the_cache(field_lake, monkeypatch):
    """The first server stores the first page's marts; a second one (reload) draws the Field
    size page, its run list and its numbers without building the warehouse, the same numbers."""
    at = open_app(field_lake, monkeypatch, run="")
    assert len(at.get("vega_lite_chart")) == 3
    c = entry(field_lake)
    assert {p.name.split("-")[0] for p in c.folder.iterdir()} == set(data.FIRST_PAGE)
    computed = field_size(field_lake)
    data.reload()
    no_warehouse(monkeypatch)
    at = open_app(field_lake, monkeypatch, run="")
    assert at.title[0].value == "Field size" and len(at.get("vega_lite_chart")) == 3
    wh = data.warehouse(str(field_lake))
    assert wh.con is None and wh.cached == set(data.FIRST_PAGE)
    pd.testing.assert_frame_equal(field_size(field_lake), computed)


def test_every_cached_mart_has_the_computed_types_and_rows(field_lake):
    """Each mart a page reads, computed by the warehouse and read back from the cache into the
    small database the pages then query: the same column types and the same rows."""
    root = str(field_lake)
    data.prepare(root)
    full = data.warehouse(root).con
    data.reload()
    light = data.warehouse(root).light
    assert data.warehouse(root).cached == set(data.MARTS)
    for mart in data.MARTS:
        types = [r[:2] for r in full.execute(f"DESCRIBE {mart}").fetchall()]
        assert [r[:2] for r in light.execute(f"DESCRIBE {mart}").fetchall()] == types, mart
        for a, b in ((full, light), (light, full)):
            rows = a.execute(f"SELECT * FROM {mart}").fetchall()
            others = set(map(repr, b.execute(f"SELECT * FROM {mart}").fetchall()))
            assert all(repr(r) in others for r in rows), mart


def test_a_damaged_or_planted_entry_is_computed_again(field_lake, monkeypatch):
    """A cached mart with a flipped byte, and a runs mart replaced by a stranger's Parquet
    (another lake's, here): the next server computes both again, shows the true numbers and
    stores whole entries in their place."""
    open_app(field_lake, monkeypatch, run="")
    truth = field_size(field_lake)
    c = entry(field_lake)
    (path,) = c.files("win_rates")
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    path.write_bytes(bytes(raw))
    stranger = field_lake.parent / "stranger"
    write_run(OTHER_SPEC, stranger)
    data.reload()
    open_app(stranger, monkeypatch, run="")
    for path in c.files("runs"):
        path.unlink()
    shutil.copy(entry(stranger).files("runs")[0], c.folder)
    data.reload()
    at = open_app(field_lake, monkeypatch, run="")
    assert at.sidebar.selectbox(key="run").options == ["field"]
    wh = data.warehouse(str(field_lake))
    assert wh.cached == {"points_per_round"} and {"runs", "win_rates"} <= wh.computed
    pd.testing.assert_frame_equal(field_size(field_lake), truth)
    assert c.load("win_rates") is not None and c.load("runs") is not None


def test_a_lake_changed_after_caching_is_not_shown_from_the_old_entry(field_lake, monkeypatch):
    """A run added after the first server: the next one lists it (the old entry is not used)
    and its entry replaces the old one."""
    open_app(field_lake, monkeypatch, run="")
    old = entry(field_lake)
    write_run(OTHER_SPEC, field_lake)
    data.reload()
    at = open_app(field_lake, monkeypatch, run="other")
    assert set(at.sidebar.selectbox(key="run").options) == {"field", "other"}
    new = entry(field_lake)
    assert new.key != old.key and not old.folder.exists()


def test_two_lakes_never_share_entries(field_lake, monkeypatch):
    """An identical copy of a lake (same files, same times) gets its own entries: its first
    server computes its marts rather than reading the original's."""
    open_app(field_lake, monkeypatch, run="")
    twin = field_lake.parent / "twin"
    shutil.copytree(field_lake, twin, copy_function=shutil.copy2)
    data.reload()
    open_app(twin, monkeypatch, run="")
    assert data.warehouse(str(twin)).cached == set()
    assert entry(twin).folder != entry(field_lake).folder


def test_a_lake_changed_while_opening_stores_nothing(field_lake, monkeypatch):
    """The first page's marts cached, a shard rewritten before the full warehouse opens: the
    cached marts (another snapshot) are dropped and nothing is stored under the old key; of
    the lake's footers, only the changed file's is read again."""
    open_app(field_lake, monkeypatch, run="")
    data.reload()
    wh = data.warehouse(str(field_lake))
    assert wh.cached == set(data.FIRST_PAGE) and wh.con is None
    games = sorted((field_lake / "games").rglob("shard-*.parquet"))[0]
    st = games.stat()
    os.utime(games, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    listings, footers = count_reads(monkeypatch)
    data.league(str(field_lake), "field")
    assert footers == [str(games)] and set(listings.values()) == {1}
    assert wh.cache is None and wh.cached == set()
    assert not list(entry_folder(field_lake).glob("*/league-*.parquet"))


def count_reads(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, int], list[str]]:
    """From now on, count the lake's listings (by the folder listed) and record the files whose
    footer is read (by the screen or by the warehouse's footer table)."""
    listings: dict[str, int] = {}
    footers: list[str] = []
    listing, footer = warehouse_lake._listing, warehouse_lake.local_footer_rows

    def counted_listing(fs, path, root):
        listings[path] = listings.get(path, 0) + 1
        return listing(fs, path, root)

    def counted_footer(path):
        footers.append(path)
        return footer(path)

    monkeypatch.setattr(warehouse_lake, "_listing", counted_listing)
    monkeypatch.setattr(warehouse_lake, "local_footer_rows", counted_footer)
    monkeypatch.setattr(warehouse_db, "local_footer_rows", counted_footer)
    return listings, footers


def test_a_new_server_lists_the_lake_and_reads_each_footer_once(field_lake, monkeypatch):
    """An empty mart cache: opening the lake and drawing the first page list each folder of the
    lake once and read each committed file's footer once; the cache key, the full warehouse and
    its consistency with the key all come from that one listing."""
    listings, footers = count_reads(monkeypatch)
    open_app(field_lake, monkeypatch, run="")
    wh = data.warehouse(str(field_lake))
    assert wh.con is not None and wh.computed == set(data.FIRST_PAGE) and wh.cache is not None
    base = str(field_lake.resolve())
    assert listings == {f"{base}/{folder}": 1 for folder in ("runs", *warehouse_lake.TABLES)}
    committed = [p for s in snapshot(base).shards for p in s.files.values()]
    assert sorted(footers) == sorted(committed) and len(committed) > 4
    assert wh.cache.key == cache.lake_key(*warehouse_lake.screen(snapshot(base)))


def test_a_later_full_warehouse_of_an_unchanged_lake_reads_no_footer(field_lake, monkeypatch):
    """The first page's marts cached: the full warehouse a later page needs lists the lake
    again (once) and, finding it unchanged, shows the snapshot the cache was keyed on without
    reading any footer, and keeps storing marts under that key."""
    open_app(field_lake, monkeypatch, run="")
    data.reload()
    wh = data.warehouse(str(field_lake))
    assert wh.cached == set(data.FIRST_PAGE) and wh.con is None
    key = wh.cache.key
    listings, footers = count_reads(monkeypatch)
    assert not data.league(str(field_lake), "field").empty
    assert footers == [] and set(listings.values()) == {1}
    assert wh.cache is not None and wh.cache.key == key and wh.cached == set(data.FIRST_PAGE)
    assert wh.cache.files("league")


def entry_folder(root: Path) -> Path:
    """The folder holding every key's entries of the lake at `root`."""
    snap = snapshot(str(root))
    return cache.MartCache(cache.cache_dir(), cache.location(snap), "0" * 64).folder.parent


def test_prepare_computes_every_page_and_the_next_server_needs_no_warehouse(
    field_lake, monkeypatch
):
    """After the first page, the background preparation computes the other pages' marts (the
    sidebar shows its progress meanwhile); a new server then draws those pages from the cache."""
    monkeypatch.setattr(data, "PREPARE_IN_BACKGROUND", True)
    monkeypatch.setattr(data, "PREPARE_DELAY_S", 0.0)
    open_app(field_lake, monkeypatch, run="")
    wh = data.warehouse(str(field_lake))
    assert wh.worker is not None
    wh.worker.join(timeout=120)
    assert wh.computed == set(data.MARTS) and data.progress(str(field_lake)) is None
    data.reload()
    no_warehouse(monkeypatch)
    for page in ("views/policies.py", "views/card_counting.py", "views/runs.py"):
        at = open_app(field_lake, monkeypatch, page, run="")
        assert at.get("vega_lite_chart"), page


def test_the_server_opens_the_lake_while_streamlit_starts(field_lake, monkeypatch):
    """serve.warm (the start-up thread of `flip7 dashboard`) leaves the first page's marts
    ready: computed on a first start, read from the cache on the next."""
    monkeypatch.setenv("FLIP7_DATA", str(field_lake))
    serve.warm()
    assert data.warehouse(str(field_lake)).computed == set(data.FIRST_PAGE)
    data.reload()
    no_warehouse(monkeypatch)
    serve.warm()
    assert data.warehouse(str(field_lake)).cached == set(data.FIRST_PAGE)


def test_a_page_goes_before_the_background_preparation(field_lake, monkeypatch):
    """A page asking for a mart while the background computes another (made to take minutes
    here) interrupts it, gets its answer at once, and the background computes its mart after."""
    root = str(field_lake)
    wh = data.warehouse(root)
    real = data._ensure
    started = threading.Event()

    def slow(wh: data.Warehouse, marts: list[str]) -> None:
        if threading.current_thread().name == "bg" and not started.is_set():
            started.set()
            wh.con.execute("SELECT count(*) FROM range(1000000000000)")  # until interrupted
        real(wh, marts)

    monkeypatch.setattr(data, "_ensure", slow)
    bg = threading.Thread(
        target=data.prepare, args=(root, ["card_counting"]), kwargs={"give_way": True}, name="bg"
    )
    bg.start()
    assert started.wait(60)
    # The background query never ends unless interrupted: waiting for it would hang here (and
    # the per-test timeout would name this test).
    assert not data.league(root, "field").empty
    bg.join(60)
    assert not bg.is_alive() and {"league", "card_counting"} <= wh.computed
