"""flip7.format: one set of rules for figures, one table renderer, colour only on a terminal;
and the command line around it: --format, the results copy, --help, did-you-mean."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
from pathlib import Path

import pytest

from flip7 import format as fmt
from flip7.cli import build_parser, main, results_path
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.simulate import simulate
from flip7.stats import Estimate


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_figures_follow_one_rule_per_kind() -> None:
    """Counts with separators; rates in percent to one decimal, trailing zero kept; points to
    two decimals; n/a for a missing figure."""
    assert fmt.count(1234567) == "1,234,567"
    assert fmt.rate(0.48) == "48.0%" and fmt.rate(0.0155, 2) == "1.55%"
    assert fmt.points(6.2) == "6.20" and fmt.points(12345.678) == "12,345.68"
    assert fmt.rate(math.nan) == "n/a" and fmt.points(None) == "n/a"
    est = Estimate(0.482, 0.461, 0.503, 0.021)
    assert fmt.format_rate(est) == "48.2% [46.1, 50.3]"
    assert fmt.format_mean(Estimate(6.214, 6.1, 6.3, 0.123)) == "6.21 ± 0.12"


def table() -> fmt.Table:
    return fmt.Table(
        [
            fmt.Column("policy", right=False),
            fmt.Column("games", fmt.count),
            fmt.Column("win rate", fmt.rate, key="win_rate"),
            fmt.Column("ppr", fmt.format_mean, key="ppr", split=fmt.estimate_fields),
        ],
        [
            ["ev", 12000, 0.5, Estimate(21.5, 21.0, 22.0, 0.5)],
            ["sum:20", 800, 0.125, Estimate(19.0, 18.5, 19.5, 0.5)],
        ],
        title="t",
    )


def test_table_aligns_numbers_right_text_left_plain_without_colour() -> None:
    lines = fmt.table_lines(table())
    assert lines[0].split() == ["policy", "games", "win", "rate", "ppr"]
    assert set(lines[1].strip()) == {"─"}
    assert lines[2].startswith("ev ") and lines[3].startswith("sum:20 ")
    # right-aligned columns end in the same place: the decimals line up
    assert lines[2].index("12,000") + 6 == lines[3].index("800") + 3
    assert lines[2].index("50.0%") == lines[3].index("12.5%")
    assert not any("\x1b[" in line for line in lines)
    assert any("\x1b[" in line for line in fmt.table_lines(table(), colour=True))


def test_table_text_in_brackets_is_shown_not_read_as_markup() -> None:
    """An interval that is not defined shows as "[n/a]", and a user's line-up label may hold
    brackets: both appear as written, in colour or not (rich would take them for markup)."""
    t = fmt.Table(
        [fmt.Column("line-up [label]", right=False), fmt.Column("win rate", fmt.format_rate)],
        [["[bold]mine[/bold]", Estimate(1.0, math.nan, math.nan, math.nan)]],
    )
    for colour in (False, True):
        text = "\n".join(fmt.table_lines(t, colour=colour))
        assert "line-up [label]" in text
        assert "[bold]mine[/bold]" in text
        assert "100.0% [n/a]" in text


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert fmt.colour_wanted(Tty()) and not fmt.colour_wanted(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not fmt.colour_wanted(Tty())


def test_csv_json_and_markdown_carry_the_values() -> None:
    result = fmt.Result({"x": math.nan, "n": 3}, ["a line"])
    result.table(table())
    rows = list(csv.DictReader(io.StringIO("\n".join(result.render("csv")))))
    assert rows[0]["games"] == "12000" and rows[1]["win_rate"] == "0.125"
    assert rows[0]["ppr_lo"] == "21.0" and rows[0]["ppr_hi"] == "22.0"
    assert json.loads("\n".join(result.render("json"))) == {"x": None, "n": 3}
    md = result.render("markdown")
    assert (
        "| policy | games | win rate | ppr |" in md
        and "| ev | 12,000 | 50.0% | 21.50 ± 0.50 |" in md
    )
    with pytest.raises(ValueError, match="choose one of table, csv, json, markdown"):
        result.render("xml")


def test_output_colours_the_terminal_but_keeps_the_results_copy_plain(monkeypatch) -> None:
    from flip7.cli import Output

    monkeypatch.delenv("NO_COLOR", raising=False)
    stream = Tty()
    out = Output(stream)
    result = fmt.Result({})
    result.table(table())
    out.emit(result)
    assert "\x1b[" in stream.getvalue()
    assert not any("\x1b[" in line for line in out.lines)


def test_results_copies_never_overwrite_each_other(tmp_path: Path) -> None:
    """Two runs in the same second: the second copy gets -2, the third -3."""
    now = dt.datetime(2026, 1, 2, 3, 4, 5)
    paths = [results_path("sim", now, tmp_path) for _ in range(3)]
    assert [p.name for p in paths] == [
        "sim-20260102-030405.txt",
        "sim-20260102-030405-2.txt",
        "sim-20260102-030405-3.txt",
    ]


def test_two_quick_runs_keep_two_results_files(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    frozen = dt.datetime(2026, 1, 2, 3, 4, 5)  # both runs in the same second
    monkeypatch.setattr(
        "flip7.cli.results_path",
        lambda command, suffix=".txt": results_path(command, frozen, suffix=suffix),
    )
    assert main(["sim", "-n", "3", "-p", "ev,ev", "--seed", "1"]) == 0
    assert main(["sim", "-n", "3", "-p", "ev,ev", "--seed", "2"]) == 0
    files = sorted((tmp_path / "results").iterdir())
    assert [f.name for f in files] == ["sim-20260102-030405-2.txt", "sim-20260102-030405.txt"]
    assert "seed 1" in files[1].read_text() and "seed 2" in files[0].read_text()
    assert "(output saved to results/sim-20260102-030405-2.txt)" in capsys.readouterr().err


def help_text(*argv: str) -> str:
    parser = build_parser()
    target = parser
    for word in argv:
        sub = next(a for a in target._actions if a.__class__.__name__ == "_SubParsersAction")
        target = sub.choices[word]
    return target.format_help()


def test_help_shows_defaults_an_example_and_the_placeholders() -> None:
    sim = help_text("sim")
    assert "(default: table)" in sim and "example:\n  flip7 sim " in sim
    assert "results/<command>-<timestamp>.txt" in sim
    status = help_text("tournament", "status")
    assert "RUN: a tournament run's name" in status and "URI: a data root" in status
    assert "example:\n  flip7 tournament status" in status
    run = help_text("tournament", "run")
    assert "SPEC: a tournament spec" in run and "(default: 1.0)" in run
    report = help_text("report")
    assert "RUN: a tournament run's name" in report and "--format" in report


def test_mistyped_names_get_a_did_you_mean(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["sm"])
    assert "did you mean 'sim'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["tournament", "stats"])
    assert "did you mean 'status'?" in capsys.readouterr().err
    for argv, want in [
        (["-p", "ev,bsut:0.2"], "did you mean 'bust:0.2'?"),
        (["--ruleset", "legasy"], "did you mean 'legacy'?"),
        (["--variant", "vengence"], "did you mean 'vengeance'?"),
    ]:
        assert main(["sim", "-n", "2", "--no-file", *argv]) == 2
        assert want in capsys.readouterr().err


def test_waiting_shows_only_on_a_terminal() -> None:
    quiet = io.StringIO()
    with fmt.waiting("starting", quiet):
        pass
    assert quiet.getvalue() == ""
    tty = Tty()
    with fmt.waiting("starting a local Ray", tty):
        pass
    assert "starting a local Ray" in tty.getvalue()


def test_sim_json_is_what_simulate_computes(capsys) -> None:
    """--format json: the documented keys, and each figure is simulate's own."""
    assert main(["sim", "-n", "40", "-p", "ev,sum:20", "--format", "json", "--no-file"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"command", "games", "players", "lineup", "ruleset", "variant", "seed", "engine"} <= set(
        doc
    )
    summary = simulate(parse_ruleset("3.1"), parse_policies(["ev", "sum:20"]), 40, 1)
    row = next(p for p in doc["policies"] if p["policy"] == "ev")
    st = summary.stats["ev"]
    assert row["win_rate"]["value"] == pytest.approx(st.win_estimate().value)
    assert row["win_rate"]["lo"] == pytest.approx(st.win_estimate().lo)
    assert row["points_per_round"]["value"] == pytest.approx(st.ppr_estimate().value)
    assert row["seats"] == st.seats and row["bust_rate"] == pytest.approx(st.busts / st.rounds)


def test_sim_csv_has_one_row_per_policy(capsys) -> None:
    assert main(["sim", "-n", "20", "-p", "ev,sum:20", "--format", "csv", "--no-file"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["policy"] for r in rows} == {"ev", "sum:20"}
    assert {"win_rate", "win_rate_lo", "win_rate_hi", "points_per_round"} <= set(rows[0])


def test_round_json_and_one_histogram_scale(capsys) -> None:
    """round --format json: mean and the histogram per policy; the histograms share their bins
    (up to the highest score of any policy) and their bar scale."""
    assert main(["round", "-n", "300", "-p", "ev,sum:20", "--format", "json", "--no-file"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ev, s20 = doc["policies"]
    assert [b["points"] for b in ev["histogram"]] == [b["points"] for b in s20["histogram"]]
    assert sum(b["share"] for b in ev["histogram"]) == pytest.approx(1.0)
    assert doc["rounds"] == 300 and ev["n"] == 300 and 0 < ev["mean"] < 60
    assert main(["round", "-n", "300", "-p", "ev,sum:20", "--no-file"]) == 0
    out = capsys.readouterr().out
    blocks = out.split("distribution of ")[1:]
    bars = [
        {line.split()[0]: line.count("#") for line in b.splitlines()[1:] if line.strip()}
        for b in blocks
    ]
    assert list(bars[0]) == list(bars[1])  # the same bins
    assert max(max(b.values()) for b in bars) == 40  # one peak, one scale
    shares = {
        p["policy"]: {b["points"]: b["share"] for b in p["histogram"]} for p in doc["policies"]
    }
    peak = max(max(s.values()) for s in shares.values())
    for spec, b in zip(("ev", "sum:20"), bars, strict=True):
        for label, marks in b.items():
            assert marks == round(40 * shares[spec][label] / peak)


def test_sim_table_snapshot(capsys, monkeypatch) -> None:
    """flip7 sim's plain table (NO_COLOR, not a terminal), figure for figure."""
    from tests.snapshot import check_snapshot, normalize

    monkeypatch.setenv("NO_COLOR", "1")
    argv = ["sim", "-n", "200", "-p", "ev,sum:20,bust:0.25", "--seed", "3", "--no-file"]
    assert main(argv) == 0
    check_snapshot("sim", normalize(capsys.readouterr().out))


def test_shell_completion_answers(tmp_path) -> None:
    """argcomplete: the shell's request (COMP_LINE) gets the matching options back."""
    import os
    import subprocess
    import sys

    answer = tmp_path / "completions"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "COMP_LINE": "flip7 sim --for",
        "COMP_POINT": "15",
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    subprocess.run([sys.executable, "-m", "flip7"], env=env, check=True, timeout=60)
    assert answer.read_text().split() == ["--format"]


def test_every_command_has_an_example_in_its_help() -> None:
    """Each command and action (tournament run, warehouse verify, ...) ends its --help with one
    example of its use."""

    def walk(parser, name):  # type: ignore[no-untyped-def]
        subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not subs:
            yield name, parser
        for sub in subs:
            for word, child in sub.choices.items():
                yield from walk(child, f"{name} {word}".strip())

    commands = dict(walk(build_parser(), ""))
    assert {"sim", "round", "solve", "odds", "report", "tournament status"} <= set(commands)
    missing = [n for n, p in commands.items() if f"example:\n  flip7 {n}" not in p.format_help()]
    assert not missing, missing


def test_a_figure_on_a_rounding_tie_prints_the_same_whatever_its_last_bits():
    """DuckDB sums in parallel, so 0.9375 may arrive as 0.9375 +- 1 ulp: the text must not flip
    between 0.937 and 0.938 from run to run (it did in the report's league table)."""
    import math as _math

    from flip7.format import Column, Table, points, rate

    tie = 0.9375
    below, above = _math.nextafter(tie, 0.0), _math.nextafter(tie, 1.0)
    assert len({points(x, 3) for x in (below, tie, above)}) == 1
    assert len({rate(x / 10, 2) for x in (below, tie, above)}) == 1
    shown = Table([Column("x", lambda v: f"{v:.3f}")], [[below], [tie], [above]]).text_rows()
    assert len({row[0] for row in shown}) == 1
