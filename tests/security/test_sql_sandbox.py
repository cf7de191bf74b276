"""`flip7 sql` without --write is read-only in fact: DuckDB's sandbox, not a statement list.

Each route below once wrote a file (a manifest was overwritten through `EXPLAIN ANALYZE COPY`)
or read one outside the lake. Every one must fail with one line naming what was refused, and
leave every file under the test's directory (the lake, a directory outside it, the working
directory) exactly as it was.
"""

from __future__ import annotations

import hashlib
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


def test_a_huge_query_stops_at_the_memory_limit(
    place: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A cross join far over a 64 MB limit fails with one line naming the limit, and spills
    nothing to disk (DuckDB would otherwise write .tmp/ in the working directory)."""
    q = "SELECT a.i, b.i FROM range(20000) a(i), range(5000) b(i) ORDER BY hash(a.i * b.i)"
    before = state(place["lake"], place["outside"], Path.cwd())
    code = main(
        ["sql", q, "--memory-limit", "64MB", "--format", "csv", "--data", str(place["lake"])]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--memory-limit" in err, err
    assert state(place["lake"], place["outside"], Path.cwd()) == before


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
    """--memory-limit takes what DuckDB takes (4GB, 50%) and says so otherwise."""
    code = main(["sql", "SELECT 1", "--memory-limit", "lots", "--data", str(place["lake"])])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "memory limit 'lots' not understood" in err and "4GB" in err
