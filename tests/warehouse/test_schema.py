"""Finding one's way in the SQL: every mart and column described (in DuckDB's own catalog, from
warehouse/sql/<layer>/schema.toml), `.tables` / `--tables`, `.schema` / `--describe`, the
generated docs/schema.md, DuckDB's hints, dot commands on a pipe, a prompt that names its lake."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from flip7.cli import main
from warehouse import connect, schema
from warehouse.build import sql_files
from warehouse.commands import script

from .lakes import Lake

DOC = Path(__file__).parents[2] / "docs" / "schema.md"
MARTS = sorted(sql_files("marts"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("materialize", [False, True])
def test_every_mart_and_column_is_described(lake: Lake, materialize: bool) -> None:
    """DuckDB's catalog holds a description for every mart (view or table) and every column of
    one: what the prompt, --describe and docs/schema.md show."""
    con = connect(lake.root, materialize=materialize)
    described = dict(
        con.execute(
            "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal "
            "UNION ALL SELECT table_name, comment FROM duckdb_tables()"
        ).fetchall()
    )
    assert set(MARTS) <= set(described)
    missing = [m for m in MARTS if not described[m]]
    assert not missing, f"marts without a description in warehouse/sql/marts/schema.toml: {missing}"
    rows = con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE table_name IN "
        "(SELECT unnest($marts))",
        {"marts": MARTS},
    ).fetchall()
    bare = [f"{t}.{c}" for t, c, comment in rows if not comment]
    assert len(rows) > 300 and not bare, (
        f"columns without a description (add them to warehouse/sql/marts/schema.toml): {bare}"
    )
    for layer in ("staging", "intermediate"):  # every relation of the other layers: one line
        for name in sql_files(layer):
            assert described.get(name), f"{layer} relation {name} has no description"


def test_descriptions_name_only_what_exists(lake: Lake) -> None:
    """A description of a relation or column that is not there (renamed, dropped) is stale."""
    con = connect(lake.root)
    for layer in schema.LAYERS:
        files = sql_files(layer)
        for name, about in schema.relations(layer).items():
            assert name in files, f"{layer}/schema.toml describes {name}, which has no SQL file"
            real = {d[0] for d in con.execute(f"SELECT * FROM {name} LIMIT 0").description}
            stale = set(about.get("columns", {})) - real  # type: ignore[arg-type]
            assert not stale, f"{layer}/schema.toml describes {name} columns it lacks: {stale}"


def test_schema_doc_is_current(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/schema.md is what `flip7 sql --schema-doc` generates from the descriptions."""
    code, out, _ = run(capsys, "sql", "--schema-doc", "--data", str(lake.root))
    assert code == 0
    for mart in MARTS:
        assert f"### `{mart}`" in out
    assert "| `win_rate_lo` | DOUBLE | lower end of win_rate's 95% interval |" in out
    assert DOC.read_text() == out, (
        f"docs/schema.md is out of date: regenerate it with `{schema.DOC_COMMAND}` "
        "(with --data pointing at any lake)"
    )


def test_tables_lists_the_marts_first_with_descriptions(
    lake: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """--tables: the marts, each with its one line, then the staging and intermediate names."""
    code, out, _ = run(capsys, "sql", "--tables", "--data", str(lake.root))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("marts: query these first")
    marts = lines[1 : lines.index("")]
    assert [line.split()[0] for line in marts] == MARTS
    win = next(line for line in marts if line.split()[0] == "win_rates")
    assert schema.relations("marts")["win_rates"]["description"] in win
    rest = "\n".join(lines[len(marts) + 1 :])
    assert "staging: " in rest and "stg_events" in rest and "int_cells" in rest
    assert not any("stg_" in line for line in marts)


def test_describe_shows_columns_with_types_and_meaning(
    lake: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """--describe NAME: the relation's line, then column, type, description; a wrong name is
    one line naming the marts."""
    code, out, _ = run(capsys, "sql", "--describe", "points_per_round", "--data", str(lake.root))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("points_per_round: Points per round per cell and policy")
    se = next(line for line in lines if line.startswith("se "))
    assert se.split()[1] == "DOUBLE" and "standard error of points_per_round" in se
    code, out, err = run(capsys, "sql", "--describe", "win_rate", "--data", str(lake.root))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "no relation named 'win_rate'" in err and "win_rates" in err
    code, out, err = run(capsys, "sql", "--tables", "FROM runs", "--data", str(lake.root))
    assert code == 2 and out == "" and "take no query" in err


@pytest.mark.parametrize(
    ("query", "hint"),
    [
        ("SELECT win FROM win_rates", 'Candidate bindings: "wins"'),
        ("SELECT * FROM win_rate", 'Did you mean "win_rates"?'),
    ],
)
def test_errors_keep_duckdbs_hint(
    lake: Lake, capsys: pytest.CaptureFixture[str], query: str, hint: str
) -> None:
    """One line still, with DuckDB's candidates or suggestion in it."""
    code, _, err = run(capsys, "sql", query, "--data", str(lake.root))
    assert code == 2 and len(err.strip().splitlines()) == 1 and hint in err


def test_dot_commands_work_on_a_pipe(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped input: dot commands and statements run in order, each printing its output."""
    text = (
        ".tables\nSELECT 6 * 7\n  AS the_answer;\n.schema runs\nSELECT 'x' AS last_word;\n.quit\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code, out, _ = run(capsys, "sql", "--data", str(lake.root))
    assert code == 0
    marts, answer = out.index("marts: query these first"), out.index("the_answer")
    runs, word = out.index("runs: One row per run"), out.index("last_word")
    assert marts < answer < runs < word
    assert "42" in out[answer:runs] and "planned_games" in out[runs:word]
    assert script(text) == [
        ".tables",
        "SELECT 6 * 7\n  AS the_answer;",
        ".schema runs",
        "SELECT 'x' AS last_word;",
        ".quit",
    ]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_prompt_names_its_lake_and_describes(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt's first line names the lake and its runs; .schema NAME describes; a wrong
    name is an error line and the prompt goes on."""
    lines: Iterator[str] = iter([".schema league", ".schema nope", "SELECT 1 AS one;", ".quit"])
    monkeypatch.setattr("sys.stdin", _Tty())
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    code, out, _ = run(capsys, "sql", "--data", str(lake.root))
    assert code == 0
    first = next(line for line in out.splitlines() if line.startswith("flip7 sql over"))
    assert str(lake.root.absolute()) in first and "runs: t1, t2" in first
    assert "league: Policies ranked per run" in out and "win_index_se" in out
    assert "error: no relation named 'nope'" in out and "one" in out
