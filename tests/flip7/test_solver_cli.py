"""flip7 solve / advice / odds: what they print, the cache flags, and bad input."""

from __future__ import annotations

import re

import pytest

from flip7.cli import main
from flip7.solver.cache import read_table


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_solve_prints_the_headline_and_writes_the_table(capsys, tmp_path):
    """flip7 solve: 002's figures, the reachable count, and a table in --cache-dir; a second
    run finds it up to date, --rebuild-cache rewrites it."""
    code, out, _ = run(capsys, "solve", "--cache-dir", str(tmp_path), "--no-file")
    assert code == 0
    assert "EV 22.232  sd 17.47  bust 31.7%  Flip 7 1.55%" in out
    assert "reachable states: 1.83M (1,834,240 decision states" in out
    assert "a Second Chance that saves you leaves the duplicate in the deck" in " ".join(
        out.split()
    )
    (path,) = tmp_path.glob("dp-basic-*.bin")
    assert f"policy table: {path} ({path.stat().st_size:,} bytes, written)" in out
    assert read_table(path).header["model"] == "basic"
    _, out, _ = run(capsys, "solve", "--cache-dir", str(tmp_path), "--no-file")
    assert "up to date" in out
    _, out, _ = run(capsys, "solve", "--cache-dir", str(tmp_path), "--rebuild-cache", "--no-file")
    assert "rebuilt" in out


def test_solve_all_prints_every_family(capsys, tmp_path):
    """--all: one row per policy to 002's precision, the rows 002 printed included (its "bust
    risk < P" rows are labelled dup:P), bust:P beside them, and a legend saying which is which."""
    code, out, _ = run(capsys, "solve", "--all", "--cache-dir", str(tmp_path), "--no-file")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if re.match(r"^\S+\s+\d", line)}
    for name in ("sum:16", "sum:20", "sum:24", "count:3", "count:4", "count:5"):
        assert name in rows
    for name in ("dup:0.25", "dup:0.35", "dup:0.45", "bust:0.25", "bust:0.35", "ev"):
        assert name in rows
    assert re.match(r"optimal\s+22\.232\s+17\.47\s+31\.7%\s+1\.55%", rows["optimal"])
    ev = {name: float(line.split()[1]) for name, line in rows.items()}
    assert ev["dup:0.25"] < ev["bust:0.25"] < ev["optimal"]
    text = " ".join(out.split())
    assert (
        "bust:P hits while the chance that the next card busts you is under P (0 holding a" in text
    )
    assert (
        "dup:P hits while the chance that the next card is a duplicate is under P, Second" in text
    )


def test_solve_tees_to_results(capsys, tmp_path, monkeypatch):
    """Like every command, solve writes its output to -o PATH (instead of the terminal)."""
    target = tmp_path / "solve.txt"
    code, _, _ = run(capsys, "solve", "--cache-dir", str(tmp_path), "-o", str(target))
    assert code == 0 and "EV 22.232" in target.read_text()


def test_advice_prints_murchs_table_first_then_ours(capsys):
    """flip7 advice: per count of numbers, Murch's table by his procedure first (fitted on the
    model deck, quoted on the 94-card deck), then ours (without and with a Second Chance); each
    rule's exact value, Murch's first: Murch's < ours <= the optimum."""
    code, out, _ = run(capsys, "advice", "--no-file")
    assert code == 0
    assert re.search(
        r"^\s+2\s+(under \d+%|always)\s+(under [\d.]+%|always)\s+[\d.]+%\s+under \d+%", out, re.M
    )
    assert out.index("Murch's table") < out.index("ours: no Second Chance")
    murch = re.search(r"^Murch's table \(his procedure\)\s+(\d+\.\d{3})", out, re.M)
    ours = re.search(r"^ours \(a Second Chance column\)\s+(\d+\.\d{3})", out, re.M)
    optimum = re.search(r"^optimal \(model basic\)\s+(\d+\.\d{3})", out, re.M)
    assert ours and murch and optimum
    assert murch.start() < ours.start()
    assert float(murch.group(1)) < float(ours.group(1)) <= float(optimum.group(1))
    assert "How they were fitted" in out and "x 88/94" in out


def test_advice_json_and_csv_carry_the_report_figures(capsys):
    """flip7 advice --format json: the cut-offs per count and the rules' exact values, Murch's
    first, the optimum (last) being the solver's own; csv: the report's two tables, one row
    per count and per rule; markdown: the same tables."""
    import csv
    import io
    import json

    from flip7.solver.model import get_model
    from flip7.solver.solve import solve

    code, out, _ = run(capsys, "advice", "--format", "json", "--no-file")
    assert code == 0
    doc = json.loads(out)
    assert doc["command"] == "advice" and doc["model"] == "basic" and doc["model_cards"] == 88
    assert [c["numbers"] for c in doc["cutoffs"]] == [1, 2, 3, 4, 5, 6]
    two = doc["cutoffs"][1]["murch"]
    assert two["cutoff"] == pytest.approx(two["fitted"] * 88 / 94)
    evs = [p["ev"] for p in doc["policies"]]
    murch, ours, optimum = evs[0], evs[2], evs[-1]
    assert optimum == pytest.approx(solve(get_model("basic")).moments.ev, abs=1e-12)
    assert murch < ours <= optimum and doc["policies"][0]["policy"].startswith("Murch's table")
    assert doc["policies"][2]["policy"].startswith("ours")
    assert 0.5 < doc["agreement"]["murch"] < doc["agreement"]["ours"] <= 1.0
    code, out, _ = run(capsys, "advice", "--format", "csv", "--no-file")
    first, second = out.split("\n\n")
    cutoffs = list(csv.DictReader(io.StringIO(first.split("\n", 1)[1])))
    values = list(csv.DictReader(io.StringIO(second.split("\n", 1)[1])))
    assert len(cutoffs) == 6 and len(values) == 6
    assert float(cutoffs[1]["cutoff"]) == doc["cutoffs"][1]["no_second_chance"]["cutoff"]
    assert float(cutoffs[1]["murch_fitted"]) == two["fitted"]
    assert float(values[2]["ev"]) == ours and values[-1]["gap"] == ""
    code, out, _ = run(capsys, "advice", "--format", "markdown", "--no-file")
    assert "| numbers | Murch's table: model deck |" in out and "| optimal (model basic) |" in out


def test_odds_with_a_hand(capsys):
    """flip7 odds --hand: the hand's bust risk and best move, then the reference tables."""
    code, out, _ = run(capsys, "odds", "--hand", "3 8 11 +4", "--no-file")
    assert code == 0
    assert "bust risk of the next card: 19/90 = 21.1% at the table" in out
    assert "optimal move: " in out and "Chance of a Flip 7 from each count" in out
    assert "quantiles 10/25/50/75/90%" in out


def test_bad_input_is_one_line_and_exit_2(capsys):
    """An unknown model or a bad hand: a one-line error naming what is valid, exit code 2."""
    code, _, err = run(capsys, "solve", "--model", "nope", "--no-file")
    assert code == 2 and "valid: basic, real, full" in err
    code, _, err = run(capsys, "odds", "--hand", "3 3", "--no-file")
    assert code == 2 and "twice is a bust" in err
    code, _, err = run(capsys, "odds", "--hand", "3 joker", "--no-file")
    assert code == 2 and "unknown card 'joker'" in err


def test_solve_json_carries_the_exact_figures(capsys, tmp_path):
    """--format json: the figures the table prints, unrounded (docs/output.md)."""
    import json

    argv = ["solve", "--cache-dir", str(tmp_path), "--format", "json", "--no-file"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    doc = json.loads(out)
    assert doc["command"] == "solve" and doc["model"] == "basic"
    assert f"{doc['optimal']['ev']:.3f}" == "22.232" and f"{doc['optimal']['bust']:.1%}" == "31.7%"
    assert doc["reachable"]["decision_states"] == 1_834_240
    assert doc["policy_table"]["status"] == "written"


def test_odds_json_carries_the_tables(capsys):
    import json

    code, out, _ = run(capsys, "odds", "--hand", "3 8 11 +4", "--format", "json", "--no-file")
    assert code == 0
    doc = json.loads(out)
    assert doc["command"] == "odds" and f"{doc['optimal']['ev']:.3f}" == "22.232"
    assert sum(b["share"] for b in doc["distribution"]) == pytest.approx(1.0, abs=1e-9)
    assert [r["numbers"] for r in doc["bust_risk"]] == [1, 2, 3, 4, 5, 6]
    assert f"{doc['flip7_from_empty_hand']['optimal_play']:.2%}" == "1.55%"
    assert set(doc["quantiles"]) == {"p10", "p25", "p50", "p75", "p90"}
    assert "19/90 = 21.1%" in " ".join(doc["hand"]["lines"])
