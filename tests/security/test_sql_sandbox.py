"""`flip7 sql` without --write is read-only in fact: DuckDB's sandbox, not a statement list.

Each route below once wrote a file (a manifest was overwritten through `EXPLAIN ANALYZE COPY`)
or read one outside the lake. Every one must fail with one line naming what was refused, and
leave every file under the test's directory (the lake, a directory outside it, the working
directory) exactly as it was.
"""

from __future__ import annotations

import gc
import hashlib
import threading
import time
from pathlib import Path

import duckdb
import pytest

from flip7.cli import main
from tests.warehouse.lakes import RUNS, write_run
from warehouse import connect


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real lake (run t2 of the warehouse tests)."""
    root = tmp_path_factory.mktemp("sandbox") / "data"
    write_run(root, "t2")
    assert "t2" in RUNS
    return root


@pytest.fixture
def place(lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The lake, a directory outside it with a secret file, and an empty working directory."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("password\nhunter2\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    manifest = lake / "runs" / "t2" / "manifest.json"
    shard = next(lake.glob("events/run=t2/players=*/shard-*.parquet"))
    return {"lake": lake, "outside": outside, "manifest": manifest, "shard": shard}


def state(*roots: Path) -> dict[str, str]:
    """Every file under roots with a hash of its bytes (and every directory)."""
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


#: (route, SQL with {outside}/{manifest}/{shard}/{lake} placeholders, what the error names).
ROUTES = [
    (
        "explain-analyze-copy-over-manifest",
        "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{manifest}' (FORMAT csv, USE_TMP_FILE false)",
        "{manifest}",
    ),
    (
        "explain-analyze-copy-new-file",
        "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{outside}/new.csv'",
        "{outside}/new.csv",
    ),
    (
        "explain-analyze-copy-over-shard",
        "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{shard}' (FORMAT parquet, USE_TMP_FILE false)",
        "{shard}",
    ),
    (
        "copy-path-from-expression",
        "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO ('{lake}/runs' || '/t2/x.csv')",
        "x.csv",
    ),
    ("set-log-query-path", "SET log_query_path = '{outside}/log.txt'; SELECT 1", "log_query_path"),
    ("pragma-profiling-output", "PRAGMA profiling_output = '{outside}/p.json'", "profiling_output"),
    ("set-enable-profiling", "SET enable_profiling = 'json'", "enable_profiling"),
    ("reopen-the-sandbox", "SET enable_external_access = true", "enable_external_access"),
    ("read-text", "SELECT * FROM read_text('/etc/hostname')", "/etc/hostname"),
    ("read-text-outside", "SELECT * FROM read_text('{outside}/secret.csv')", "secret.csv"),
    ("glob", "SELECT * FROM glob('/root/**')", "/root/**"),
    ("read-csv-outside", "SELECT * FROM read_csv('{outside}/secret.csv')", "secret.csv"),
    ("read-the-lake-by-path", "SELECT count(*) FROM read_parquet('{shard}')", "{shard}"),
    ("attach-outside", "ATTACH '{outside}/x.duckdb' AS x", "ATTACH"),
    ("install", "INSTALL httpfs", "LOAD"),
    ("load", "LOAD httpfs", "LOAD"),
]


def fill(text: str, place: dict[str, Path]) -> str:
    return text.format(**{k: str(v) for k, v in place.items()})


@pytest.mark.parametrize(("name", "sql", "names"), ROUTES, ids=[r[0] for r in ROUTES])
def test_sql_refuses_every_route_out(
    place: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    name: str,
    sql: str,
    names: str,
) -> None:
    """Each route through `flip7 sql`: exit 2, one line naming the culprit, no file touched."""
    before = state(place["lake"], place["outside"], Path.cwd())
    code = main(["sql", fill(sql, place), "--data", str(place["lake"])])
    out, err = capsys.readouterr()
    assert state(place["lake"], place["outside"], Path.cwd()) == before
    assert code == 2, out
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("flip7 sql: error: ") and fill(names, place) in err, err


@pytest.mark.parametrize(("name", "sql", "names"), ROUTES, ids=[r[0] for r in ROUTES])
def test_the_sandbox_itself_refuses(
    place: dict[str, Path], name: str, sql: str, names: str
) -> None:
    """The same routes straight on a read-only connection (no statement check in between):
    DuckDB itself refuses each one, and nothing is written."""
    before = state(place["lake"], place["outside"], Path.cwd())
    con = connect(place["lake"])
    with pytest.raises(duckdb.Error):
        con.execute(fill(sql, place)).fetchall()
    assert state(place["lake"], place["outside"], Path.cwd()) == before


def test_write_opens_the_sandbox(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--write is the named way out: the outside file is read, a COPY writes where asked."""
    target = place["outside"] / "out.csv"
    q = f"COPY (SELECT * FROM read_csv('{place['outside']}/secret.csv')) TO '{target}'"
    assert main(["sql", q, "--write", "--data", str(place["lake"])]) == 0
    assert target.read_text().splitlines() == ["password", "hunter2"]


def test_a_runaway_query_stops_at_the_timeout(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """An endless recursive CTE with --timeout 1: stopped within a few seconds, one line."""
    q = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"
    before = state(place["lake"], place["outside"], Path.cwd())
    t0 = time.perf_counter()
    code = main(["sql", q, "--timeout", "1", "--data", str(place["lake"])])
    elapsed = time.perf_counter() - t0
    _, err = capsys.readouterr()
    assert code == 2 and elapsed < 10
    assert len(err.strip().splitlines()) == 1 and "--timeout 1 s" in err, err
    assert state(place["lake"], place["outside"], Path.cwd()) == before


@pytest.fixture
def spills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory named by $FLIP7_SPILL_DIR: where the warehouse spills."""
    path = tmp_path / "spills"
    path.mkdir()
    monkeypatch.setenv("FLIP7_SPILL_DIR", str(path))
    return path


def test_a_huge_query_stops_at_the_memory_limit(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str], spills: Path
) -> None:
    """Read-only, a cross join far over a 64 MB limit fails with one line naming the limit and
    spills nothing anywhere: `flip7 sql` runs the user's text, and DuckDB would let that text
    read and write in a spill directory, so it gets none (no .tmp/ in the working directory,
    no private directory made either)."""
    q = "SELECT a.i, b.i FROM range(20000) a(i), range(5000) b(i) ORDER BY hash(a.i * b.i)"
    before = state(place["lake"], place["outside"], Path.cwd())
    code = main(
        ["sql", q, "--memory-limit", "64MB", "--format", "csv", "--data", str(place["lake"])]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--memory-limit" in err, err
    assert "--write" in err, err  # the way to let it spill
    assert state(place["lake"], place["outside"], Path.cwd()) == before
    assert list(spills.iterdir()) == []


#: 10M rows sorted: about 150 MB of sort data, over a 64 MB memory limit. DuckDB needs some
#: memory per thread however much it spills, so the connections that run it have one thread.
BIG_SORT = (
    "SELECT count(*) AS n, sum(x) AS s FROM (SELECT a.i * b.i AS x FROM range(20000) a(i), "
    "range(500) b(i) ORDER BY hash(a.i * b.i))"
)
#: sum of i * j over i < 20000, j < 500.
BIG_SORT_SUM = (19999 * 20000 // 2) * (499 * 500 // 2)


def test_a_query_over_the_limit_spills_into_a_private_directory(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch, spills: Path
) -> None:
    """On a reading connection (the report's, the dashboard's), a query over its memory limit
    spills into a directory made for it alone under $FLIP7_SPILL_DIR, finishes with the right
    answer, and leaves nothing behind there, in the lake or in the working directory."""
    monkeypatch.setenv("FLIP7_SPILL_LIMIT", "2GB")
    before = state(place["lake"], place["outside"], Path.cwd())
    con = connect(place["lake"], memory_limit="64MB", threads=1)
    assert con.execute(BIG_SORT).fetchall() == [(10_000_000, BIG_SORT_SUM)]
    assert state(place["lake"], place["outside"], Path.cwd()) == before
    del con
    gc.collect()
    assert list(spills.iterdir()) == []


def test_a_query_over_the_spill_limit_stops_with_one_line(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch, spills: Path
) -> None:
    """Spilling stops at $FLIP7_SPILL_LIMIT: the query fails, and the commands say so in one
    line naming that limit and how to raise it; the spill directory is gone afterwards."""
    from warehouse.commands import memory_message

    monkeypatch.setenv("FLIP7_SPILL_LIMIT", "40MB")
    con = connect(place["lake"], memory_limit="64MB", threads=1)
    with pytest.raises(duckdb.OutOfMemoryException) as exc:
        con.execute(BIG_SORT).fetchall()
    for spills_at_all in (None, True):
        line = memory_message(exc.value, spills_at_all)
        assert "\n" not in line and "more disk to spill to than its limit" in line, line
        assert "FLIP7_SPILL_LIMIT" in line, line
    del con
    gc.collect()
    assert list(spills.iterdir()) == []


def test_sql_write_spills_into_a_private_directory(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str], spills: Path
) -> None:
    """`flip7 sql --write` (the sandbox lifted) spills under $FLIP7_SPILL_DIR, not into .tmp/ of
    the working directory as DuckDB would by default; the directory goes when it is done."""
    q = "SELECT current_setting('temp_directory') AS t"
    code = main(["sql", q, "--write", "--format", "csv", "--data", str(place["lake"])])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert Path(out.splitlines()[1]).parent.parent == spills
    gc.collect()
    assert list(spills.iterdir()) == [] and list(Path.cwd().iterdir()) == []


def spill_dir_of(con: duckdb.DuckDBPyConnection) -> Path:
    """The private directory a connection spills into (its temp_directory's parent)."""
    rows = con.execute("SELECT current_setting('temp_directory')").fetchall()
    return Path(rows[0][0]).parent


def test_the_spill_directory_is_private_and_chosen_by_the_warehouse(
    place: dict[str, Path], spills: Path
) -> None:
    """A reading connection (the report's, the dashboard's) spills into a new directory of
    mode 0700 under $FLIP7_SPILL_DIR, never into the working directory, and no query can move
    it elsewhere or lift its size limit or the memory limit (the configuration is locked)."""
    con = connect(place["lake"], memory_limit="64MB", threads=1)
    private = spill_dir_of(con)
    assert private.parent == spills and private.stat().st_mode & 0o777 == 0o700
    assert con.execute(BIG_SORT).fetchall()[0][0] == 10_000_000
    for sql in (
        f"SET temp_directory = '{place['outside']}'",
        "SET temp_directory = '.tmp'",
        "RESET temp_directory",
        "SET max_temp_directory_size = '1TB'",
        "SET memory_limit = '100GB'",
    ):
        with pytest.raises(duckdb.Error, match="locked|disabled"):
            con.execute(sql).fetchall()
    assert spill_dir_of(con) == private
    # DuckDB lets SQL reach the spill directory itself (see docs/guarantees.md), not beside it.
    planted = spills / "planted.csv"
    planted.write_text("a\n1\n")
    for sql in (
        f"SELECT * FROM read_csv('{planted}')",
        f"COPY (SELECT 1 AS a) TO '{private}/duckdb/../../x.csv'",
        f"COPY (SELECT 1 AS a) TO '{spills}/x.csv'",
    ):
        with pytest.raises(duckdb.Error, match="disabled by configuration"):
            con.execute(sql).fetchall()
    assert sorted(p.name for p in spills.iterdir()) == sorted([private.name, "planted.csv"])
    assert list(Path.cwd().iterdir()) == []


def test_the_spill_directory_is_removed_when_the_connection_is_released(
    place: dict[str, Path], spills: Path
) -> None:
    """After a query spilled, closing the connection deletes DuckDB's files and releasing it
    removes the private directory: nothing is left under $FLIP7_SPILL_DIR."""
    con = connect(place["lake"], memory_limit="64MB", threads=1)
    private = spill_dir_of(con)
    done = threading.Event()
    sizes: list[int] = []

    def watch() -> None:  # the spill files exist only while the sort runs
        while not done.wait(0.01):
            sizes.append(sum(p.stat().st_size for p in private.rglob("*") if p.is_file()))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        con.execute(BIG_SORT).fetchall()
    finally:
        done.set()
        watcher.join()
    assert max(sizes) > 0  # it did spill there
    con.close()
    assert list(private.rglob("*")) == []
    del con
    gc.collect()
    assert not private.exists() and list(spills.iterdir()) == []


def test_flip7_sql_makes_no_spill_directory_a_query_could_reach(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str], spills: Path
) -> None:
    """DuckDB lets SQL read and write inside a connection's spill directory even with file
    access off, so `flip7 sql` (the user's text) has none: its temp_directory is empty and
    nothing is made under $FLIP7_SPILL_DIR."""
    code = main(
        [
            "sql",
            "SELECT current_setting('temp_directory') AS t",
            "--format",
            "csv",
            "--data",
            str(place["lake"]),
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0 and out.splitlines() == ["t", '""']
    assert list(spills.iterdir()) == []


def test_a_query_cannot_use_the_spill_directory_of_flip7_sql(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str], spills: Path
) -> None:
    """Even naming a directory where flip7 would spill, `flip7 sql` refuses to read a file
    planted there, to COPY into it or ATTACH a database in it: one line each, nothing written."""
    planted = spills / "planted.csv"
    planted.write_text("a\n1\n")
    before = state(place["lake"], place["outside"], Path.cwd(), spills)
    for sql in (
        f"SELECT * FROM read_csv('{planted}')",
        f"EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{spills}/x.csv'",
        f"ATTACH '{spills}/x.duckdb' AS x",
        f"SELECT * FROM glob('{spills}/*')",
    ):
        code = main(["sql", sql, "--data", str(place["lake"])])
        _, err = capsys.readouterr()
        assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert state(place["lake"], place["outside"], Path.cwd(), spills) == before


@pytest.mark.parametrize("value", ["0", "-3", "soon"])
def test_a_bad_timeout_is_one_line(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """--timeout takes seconds > 0 and says so."""
    with pytest.raises(SystemExit) as exc:
        main(["sql", "SELECT 1", "--timeout", value, "--data", str(place["lake"])])
    assert exc.value.code == 2
    assert "--timeout takes seconds > 0" in capsys.readouterr().err


def test_the_dashboard_and_the_report_read_through_the_sandbox(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's warehouse, its database of cached marts and the report's connection are
    the same read-only kind: DuckDB refuses a file outside the lake and a COPY over the
    manifest."""
    from dashboard import data

    report_con = connect(place["lake"], ["t2"])
    wh = data.warehouse(str(place["lake"]))
    assert wh.con is not None and wh.light is not None
    before = state(place["lake"], place["outside"], Path.cwd())
    for con in (report_con, wh.con, wh.light):
        for sql in (ROUTES[0][1], "SELECT * FROM read_text('{outside}/secret.csv')"):
            with pytest.raises(duckdb.Error, match="disabled by configuration"):
                con.execute(fill(sql, place)).fetchall()
    assert state(place["lake"], place["outside"], Path.cwd()) == before
    data.reload()


def test_a_bad_memory_limit_is_one_line(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--memory-limit takes a size (4GB) or a share (50%) and says so otherwise."""
    code = main(["sql", "SELECT 1", "--memory-limit", "lots", "--data", str(place["lake"])])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--memory-limit 'lots' is not a memory limit" in err and "4GB" in err


@pytest.mark.parametrize(
    "sql",
    [
        "EXPLAIN ANALYZE CREATE OR REPLACE VIEW win_rates AS SELECT 'forged' AS policy, "
        "1.0 AS win_rate; SELECT * FROM win_rates",
        "EXPLAIN CREATE TABLE forged AS SELECT 1; SELECT * FROM forged",
        "/* x */ explain analyse insert into runs_with_problems values ('forged', 'x'); "
        "SELECT * FROM runs_with_problems",
        "EXPLAIN (FORMAT json) CREATE VIEW forged AS SELECT 1; FROM forged",
    ],
)
def test_explain_does_not_get_round_write(
    sql: str, place: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`EXPLAIN ANALYZE` runs its statement: EXPLAIN of a statement that needs --write needs it
    too (a forged view replaced a mart and the next statement printed it)."""
    code = main(["sql", sql, "--data", str(place["lake"])])
    out, err = capsys.readouterr()
    assert code == 2 and "forged" not in out, out
    assert len(err.strip().splitlines()) == 1 and "--write" in err, err
    assert (
        main(
            ["sql", "EXPLAIN ANALYZE SELECT count(*) FROM stg_games", "--data", str(place["lake"])]
        )
        == 0
    )


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("DROP VIEW win_rates; SELECT 1", "DROP"),
        ("DROP TABLE IF EXISTS x", "DROP"),
        ("CREATE OR REPLACE VIEW win_rates AS SELECT 'forged' AS run", "CREATE"),
        ("ALTER VIEW win_rates RENAME TO w", "ALTER"),
        ("INSERT INTO runs VALUES ('forged')", "INSERT"),
        ("DELETE FROM runs", "DELETE"),
        ("UPDATE runs SET run = 'forged'", "UPDATE"),
    ],
)
def test_statements_that_change_the_views_are_refused_before_they_run(
    sql: str, kind: str, place: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The sandbox keeps files safe, not the connection's own views: dropping or replacing a
    mart would make the next statement of the same query answer from a forged or missing
    relation. So every statement outside SELECT, EXPLAIN, PRAGMA, CALL and SET is refused by
    kind, before any statement runs, and the mart still answers afterwards."""
    from warehouse.commands import check_read_only

    con = connect(place["lake"])
    with pytest.raises(ValueError, match=f"^{kind} statements are not allowed"):
        check_read_only(con, sql)
    assert con.execute("SELECT count(*) FROM win_rates").fetchone()[0] > 0
    code = main(["sql", sql, "--data", str(place["lake"])])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith(f"flip7 sql: error: {kind} statements are not allowed")
