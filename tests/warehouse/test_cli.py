"""`flip7 sql`, `flip7 report` and `flip7 warehouse verify`, run through the flip7 entry point."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from flip7.cli import main
from flip7.stats import RatioSums

from .lakes import Lake, Played, shard_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sql_prints_a_table(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """A query's result as an aligned table with its row count."""
    code, out, _ = run(
        capsys, "sql", "SELECT run, games FROM runs ORDER BY run", "--data", str(lake.root)
    )
    assert code == 0
    assert out.splitlines() == ["run  games", "─" * 10, "t1     160", "t2      20", "(2 rows)"]


def test_sql_over_one_run_and_formats(
    lake: Lake, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--run limits the views to that run; csv, json and parquet carry the same rows."""
    q = "SELECT run, policy, wins FROM win_rates ORDER BY policy"
    base = ["sql", q, "--data", str(lake.root), "--run", "t2"]
    code, out, _ = run(capsys, *base, "--format", "csv")
    csv = pd.read_csv(io.StringIO(out))
    assert code == 0 and set(csv.run) == {"t2"} and len(csv) == 3
    _, out, _ = run(capsys, *base, "--format", "json")
    assert [r["policy"] for r in json.loads(out)] == list(csv.policy)
    target = tmp_path / "wins.parquet"
    code, out, _ = run(capsys, *base, "--format", "parquet", "-o", str(target))
    assert code == 0 and out == ""
    assert pd.read_parquet(target).equals(csv)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELEC 1", "Parser Error: syntax error at or near"),
        ("SELECT * FROM no_such_table", "Table with name no_such_table does not exist"),
        ("COPY (SELECT 1) TO 'x.csv'", "COPY statements are not allowed: flip7 sql is read-only"),
        ("CREATE TABLE x AS SELECT 1", "CREATE statements are not allowed"),
    ],
)
def test_sql_errors_are_one_line(
    lake: Lake, capsys: pytest.CaptureFixture[str], query: str, message: str
) -> None:
    """Bad or writing SQL: exit 2 and one clear line on stderr, no traceback."""
    code, out, err = run(capsys, "sql", query, "--data", str(lake.root))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("flip7 sql: error: ") and message in err


def test_sql_write_allows_changes_in_memory(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """--write lets other statements run (against the in-memory database only)."""
    code, out, _ = run(
        capsys,
        "sql",
        "CREATE TABLE x AS SELECT 41 AS a; SELECT a + 1 AS b FROM x",
        "--write",
        "--data",
        str(lake.root),
    )
    assert code == 0 and "42" in out


def test_sql_missing_run(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """A run that does not exist is named, with the runs that do."""
    code, _, err = run(capsys, "sql", "SELECT 1", "--data", str(lake.root), "--run", "t9")
    assert code == 2 and "no run 't9'" in err and "t1, t2" in err


def test_sql_reads_statements_from_a_pipe(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no query and stdin not a terminal, the piped statements run."""
    monkeypatch.setattr("sys.stdin", io.StringIO("SELECT 6 * 7 AS answer;"))
    code, out, _ = run(capsys, "sql", "--data", str(lake.root))
    assert code == 0 and out.split()[:3] == ["answer", "─" * 6, "42"]


def test_sql_with_nothing_to_run(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No query and an empty pipe: a one-line error saying how to give one."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, _, err = run(capsys, "sql", "--data", str(lake.root))
    assert code == 2 and "no query" in err


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_sql_prompt_keeps_going_after_an_error(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interactive prompt: multi-line statements, dot commands, an error that does not end
    the session, then .quit."""
    lines: Iterator[str] = iter(
        [".tables", "SELECT count(*) AS n", "FROM stg_games;", "SELEC 1;", ".quit"]
    )
    monkeypatch.setattr("sys.stdin", _Tty())
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    code, out, _ = run(capsys, "sql", "--data", str(lake.root))
    assert code == 0
    assert "win_rates" in out and "stg_events" in out  # .tables
    assert "460" in out  # games rows: t1 80 x 2 + 80 x 3 seats, t2 20 x 3
    assert "error: Parser Error" in out


def test_report_shows_the_headline_tables(
    lake: Lake,
    truth: dict[str, list[Played]],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """report RUN prints per-cell field size and round tables, card counting and the league,
    each figure beside a "95% interval" column; -o writes it to a file instead of the terminal."""
    saved = tmp_path / "report.txt"
    code, printed, _ = run(capsys, "report", "t1", "--data", str(lake.root), "-o", str(saved))
    assert code == 0 and printed == ""
    out = saved.read_text()
    for heading in ("Field size:", "How rounds end:", "Card counting:", "Policy comparison:"):
        assert heading in out
    assert "evc vs ev" in out and "paired" in out and "unpaired" in out
    assert "cell 1 vs cell 0" in out  # the paired comparison names both line-ups
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("line-up"))
    assert header.split().count("interval") == 3 and "95% interval" in header
    # field size: one row per cell and policy; bust:0.25 plays in three cells of t1
    start = lines.index(header)
    rows = lines[start + 2 : lines.index("", start)]
    assert len(rows) == 10 and sum(" bust:0.25 " in r for r in rows) == 3
    ev = next(r for r in rows if r.startswith("cell 0") and " ev " in r)
    wins = [(int(g.result.winner == g.specs.index("ev")), 1) for g in truth["t1"] if g.cell == 0]
    est = RatioSums.of(wins).estimate(clip=(0.0, 1.0))  # one seat per game: n = 1
    want = f"{100 * est.value:.1f}%  [{100 * est.lo:.1f}, {100 * est.hi:.1f}]"  # rates: one decimal
    assert want in ev


def test_report_unknown_run(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown run is a one-line error."""
    code, _, err = run(capsys, "report", "nope", "--data", str(lake.root), "--no-file")
    assert code == 2 and "no run 'nope'" in err


def test_verify_exit_status(lake_copy: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """0 and 'all checks passed' on a clean lake; 1 and the failing check once damaged."""
    code, out, _ = run(capsys, "warehouse", "verify", "--data", str(lake_copy.root))
    assert code == 0 and out.splitlines()[-1] == "all checks passed"
    shard_path(lake_copy.root, "rounds", lake_copy.tasks["t2"][0]).unlink()
    code, out, _ = run(capsys, "warehouse", "verify", "t2", "--data", str(lake_copy.root))
    assert code == 1
    assert "FAIL  committed_files" in out and "rounds file is missing" in out


def test_sql_prints_figures_as_the_report_does(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table format: counts with thousands separators, rates in percent, a figure's _lo
    and _hi as one `[lo, hi]` column beside it; json keeps the values (issue 32, item 8)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    q = "SELECT 40000 AS games, 0.246487 AS win_rate, 0.2401 AS win_rate_lo, 0.2529 AS win_rate_hi"
    code, out, _ = run(capsys, "sql", q, "--data", str(lake.root))
    assert code == 0
    assert out.splitlines()[:3] == [
        " games  win_rate    95% interval",
        "─" * 32,
        "40,000    24.65%  [24.01, 25.29]",
    ]
    _, out, _ = run(capsys, "sql", q, "--data", str(lake.root), "--format", "json")
    assert json.loads(out) == [
        {"games": 40000, "win_rate": 0.246487, "win_rate_lo": 0.2401, "win_rate_hi": 0.2529}
    ]
    _, out, _ = run(capsys, "sql", q, "--data", str(lake.root), "--format", "markdown")
    assert out.splitlines()[2] == "| 40,000 | 24.65% | [24.01, 25.29] |"


def test_sql_fits_the_terminal(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`flip7 sql "FROM win_rates"` in 80 columns: labels wrap, the columns on the right that do
    not fit are left out and named; --wide and -o files keep them all (issue 32, item 7)."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "sql", "FROM win_rates", "--data", str(lake.root))
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 80, out
    assert "left out to fit 80 columns: " in out and "mean_rank" in out.split("left out")[1]
    _, out, _ = run(capsys, "sql", "FROM win_rates", "--data", str(lake.root), "--wide")
    assert "left out" not in out and "mean_rank" in out.splitlines()[0]


def test_league_has_a_stable_order_and_csv_lists_parse_back(
    lake: Lake, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`FROM league` lists each run's policies by place, the same way every time; its list
    columns are JSON arrays in CSV, and parse back as lists (issue 32, items 8 and 9)."""
    target = tmp_path / "wins.csv"
    argv = ["sql", "FROM league", "--data", str(lake.root), "--format", "csv", "-o", str(target)]
    assert run(capsys, *argv)[0] == 0
    df = pd.read_csv(target)
    for _, one in df.groupby("run", sort=False):
        assert list(one.place) == sorted(one.place)
    assert list(df.run) == sorted(df.run)
    sizes = df.field_sizes.map(json.loads)
    lineups = df.lineups.map(json.loads)
    assert all(isinstance(x, list) and all(isinstance(n, int) for n in x) for x in sizes)
    assert all(isinstance(x, list) and all(isinstance(s, str) for s in x) for x in lineups)
    again = tmp_path / "again.csv"
    assert run(capsys, *argv[:-1], str(again))[0] == 0
    assert again.read_text() == target.read_text()


def test_sql_over_a_file_that_does_not_decode_names_it(
    lake_copy: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stored events file whose values do not decode: `flip7 sql` reading it fails in one
    line naming the file and what is wrong with it, not a traceback."""
    from .test_verify import _damage_stored

    path = shard_path(lake_copy.root, "events", lake_copy.tasks["t2"][0])
    _damage_stored(path, "width")
    code, _, err = run(
        capsys, "sql", "SELECT count(*) FROM stg_events", "--data", str(lake_copy.root)
    )
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert str(path) in err and "index width" in err and "Traceback" not in err
