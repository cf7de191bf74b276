"""One statistics contract: the same cell shows the same figures and intervals everywhere.

One small tournament (one cell: three seats, `ev` in two of them, seats rotated) is written to a
lake without Ray; then `flip7 sim` on the same seed and line-up (it plays the very same games:
cell 0's seeds are `derive_seed(seed, 0, i)` and game i rotates by i seats in both), the
tournament summary behind `tournament run`/`status`, the warehouse marts (the Python query API
that `flip7 report` and the dashboard call), `flip7 sql` on the marts, and the dashboard's data
layer must give one number for each figure and each end of its interval.
"""

from __future__ import annotations

import csv
import io
import math
import re

import pytest

from flip7.cli import main
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.simulate import format_mean, format_rate, simulate
from pipeline.lake import Lake
from pipeline.plan import make_plan
from pipeline.spec import parse_spec
from pipeline.summary import run_summary
from tests.pipeline.helpers import run_inline

SEED, GAMES, SEATS = 4242, 300, ["ev", "bust:0.25", "ev"]
SPEC = f"""
name = "contract"
seed = {SEED}
games = {GAMES}
shard_size = 100

[[lineups]]
name = "mix"
seats = {SEATS!r}
""".replace("'", '"')

#: Relative tolerance between Python's float sums and DuckDB's: the same formula in another order.
REL = 1e-9


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-12)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = str(tmp_path_factory.mktemp("contract") / "lake")
    run_inline(make_plan(parse_spec(SPEC)), root)
    return root


@pytest.fixture(scope="module")
def figures(lake: str) -> dict[str, dict[str, tuple[float, float, float]]]:
    """source -> 'win:POLICY' / 'ppr:POLICY' -> (value, lo, hi), from every place that shows them."""
    out: dict[str, dict[str, tuple[float, float, float]]] = {}

    sim = simulate(parse_ruleset("3.1"), parse_policies(SEATS), GAMES, SEED, engine="auto")
    out["sim"] = {}
    for spec, st in sim.stats.items():
        w, p = st.win_estimate(), st.ppr_estimate()
        out["sim"][f"win:{spec}"] = (w.value, w.lo, w.hi)
        out["sim"][f"ppr:{spec}"] = (p.value, p.lo, p.hi)

    lk = Lake.open(lake)
    out["summary"] = {}
    for row in run_summary(lk, lk.load_manifest("contract")):
        assert (row.lineup, row.players) == ("mix", 3)
        out["summary"][f"win:{row.policy}"] = (row.win.value, row.win.lo, row.win.hi)
        out["summary"][f"ppr:{row.policy}"] = (row.ppr.value, row.ppr.lo, row.ppr.hi)

    import warehouse
    from warehouse import queries

    con = warehouse.connect(lake)
    out["marts"] = {}
    for r in queries.win_rates(con, runs=["contract"]).itertuples():
        out["marts"][f"win:{r.policy}"] = (r.win_rate, r.win_rate_lo, r.win_rate_hi)
    for r in queries.points_per_round(con, runs=["contract"]).itertuples():
        out["marts"][f"ppr:{r.policy}"] = (r.points_per_round, r.ppr_lo, r.ppr_hi)
    con.close()

    from dashboard import data

    out["dashboard"] = {}
    for r in data.field_size(lake, "contract", lineup="mix").itertuples():
        out["dashboard"][f"win:{r.policy}"] = (r.win_rate, r.win_rate_lo, r.win_rate_hi)
        out["dashboard"][f"ppr:{r.policy}"] = (
            r.points_per_round,
            r.points_per_round_lo,
            r.points_per_round_hi,
        )
    return out


def test_every_place_gives_the_same_figures_and_intervals(figures) -> None:
    """sim, the tournament summary, the marts and the dashboard agree on every figure and both
    ends of every interval (to float rounding), for both policies of the cell."""
    reference = figures["sim"]
    assert set(reference) == {"win:ev", "win:bust:0.25", "ppr:ev", "ppr:bust:0.25"}
    for source, got in figures.items():
        assert set(got) == set(reference), source
        for key, (value, lo, hi) in reference.items():
            assert lo < value < hi, (source, key)
            g = got[key]
            assert all(_close(a, b) for a, b in zip(g, (value, lo, hi), strict=True)), (
                source,
                key,
                g,
            )


def test_flip7_sql_prints_the_marts_figures(lake: str, figures, capsys) -> None:
    """`flip7 sql` on the win_rates mart prints the same numbers (CSV keeps full precision)."""
    query = (
        "SELECT policy, win_rate, win_rate_lo, win_rate_hi FROM win_rates "
        "WHERE run = 'contract' ORDER BY policy"
    )
    assert main(["sql", "--data", lake, "--format", "csv", query]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["policy"] for r in rows} == {"ev", "bust:0.25"}
    for r in rows:
        want = figures["sim"][f"win:{r['policy']}"]
        got = (float(r["win_rate"]), float(r["win_rate_lo"]), float(r["win_rate_hi"]))
        assert all(_close(a, b) for a, b in zip(got, want, strict=True)), (r, want)


def test_sim_and_status_print_the_same_text(lake: str, figures, capsys) -> None:
    """The printed figures of `flip7 sim` and `flip7 tournament status` are the same strings."""
    assert (
        main(["sim", "-n", str(GAMES), "-p", ",".join(SEATS), "--seed", str(SEED), "--no-file"])
        == 0
    )
    sim_out = capsys.readouterr().out
    assert main(["tournament", "status", "contract", "--data", lake]) == 0
    status_out = capsys.readouterr().out
    from flip7.stats import Estimate

    for policy in ("ev", "bust:0.25"):
        w = Estimate(*figures["sim"][f"win:{policy}"], half_width=math.nan)
        text = format_rate(w)
        assert text in sim_out and text in status_out, (policy, text)
        v, lo, hi = figures["sim"][f"ppr:{policy}"]
        ppr = format_mean(Estimate(v, lo, hi, (hi - lo) / 2))
        assert ppr in sim_out and ppr in status_out, (policy, ppr)


def test_report_prints_the_marts_figures(lake: str, figures, capsys) -> None:
    """`flip7 report`'s field-size row of each policy shows its win rate and both ends of the
    interval (in percent, to the report's rounding)."""
    assert main(["report", "contract", "--data", lake, "--no-file"]) == 0
    text = capsys.readouterr().out
    for policy in ("ev", "bust:0.25"):
        row = next(
            line
            for line in text.splitlines()
            if re.match(rf"mix\s+3\s+{re.escape(policy)}\s", line)
        )
        shown = [float(x) for x in re.findall(r"-?\d+\.\d+", row)]
        for x in figures["marts"][f"win:{policy}"]:
            assert any(abs(n - 100 * x) <= 0.05 + 1e-9 for n in shown), (policy, x, row)


def test_rules_state_the_contract(capsys) -> None:
    """`flip7 rules` says what a cell is and how intervals are computed."""
    assert main(["rules", "--no-file"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "per cell: run, variant, ruleset, field size and line-up" in text
    assert "95% interval is clustered by game" in text
