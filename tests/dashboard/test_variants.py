"""The Classic vs With a Vengeance page on a lake that tempts it to pool what differs: a run
playing its line-up under two rulesets, a run replaying another's games (one root seed), and a
run giving the same label to another line-up. Every cell stays apart (ruleset, seating), the
replay is said, and the figures are the ones recomputed here from the Parquet files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from flip7.stats import RatioSums
from lakecontract import codec
from tests.dashboard.lake import write_run
from tests.dashboard.test_app import APP, charts


def duel(
    name: str, seed: int, games: int, rules: str = 'ruleset = "3.1"', rival: str = "bust:0.25"
) -> str:
    """A run of the line-up labelled "duel", ev against `rival`: `games` games in one shard
    under `rules` (its ruleset line and any other top-level line)."""
    return f"""
name = "{name}"
seed = {seed}
games = {games}
shard_size = {games}
{rules}

[[lineups]]
name = "duel"
seats = ["ev", "{rival}"]
"""


SPECS = [
    # "duel" under two rulesets (cell 0: 3.1, cell 1: 3.1(target=150))
    duel("classic-a", 31, 30, rules='rulesets = ["3.1", "3.1(target=150)"]'),
    # the same seed and cell numbers: its 20 games are classic-a's first 20 under 3.1, replayed
    duel("classic-b", 31, 20),
    # the label "duel" for another line-up
    duel("classic-c", 32, 30, rival="count:1"),
    duel("venge-a", 33, 30, rules='ruleset = "3.1"\nvariant = "vengeance"'),
]

#: (variant, ruleset, seating) -> the (run, cell) pairs that played it.
CELLS = {
    ("classic", "3.1", "ev,bust:0.25"): [("classic-a", 0), ("classic-b", 0)],
    ("classic", "3.1(target=150)", "ev,bust:0.25"): [("classic-a", 1)],
    ("classic", "3.1", "ev,count:1"): [("classic-c", 0)],
    ("vengeance", "3.1", "ev,bust:0.25"): [("venge-a", 0)],
}


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("variants-dash")
    for spec in SPECS:
        write_run(spec, root)
    return root


def _table(root: Path, name: str) -> pd.DataFrame:
    """Every row of one lake table as readers see them (events and rounds decoded), with the
    run and players of each file's folders."""
    parts = []
    for path in sorted((root / name).glob("run=*/players=*/shard-*.parquet")):
        df = codec.read_table(str(path), name).to_pandas()
        run, players = (p.split("=", 1)[1] for p in path.parts[-3:-1])
        parts.append(df.assign(run=run, players=int(players)))
    return pd.concat(parts, ignore_index=True)


def _games(root: Path, key: tuple[str, str, str]) -> pd.DataFrame:
    games = _table(root, "games")
    keep = pd.Series(False, index=games.index)
    for run, cell in CELLS[key]:
        keep |= (games["run"] == run) & (games["cell"] == cell)
    return games[keep]


def _expected(root: Path, key: tuple[str, str, str], policy: str) -> dict[str, float]:
    """Points per round and win index of `policy` in one cell over its runs, clustered by the
    game's seed (a replayed game is the same shuffle as the one it replays)."""
    seats = _games(root, key).query("policy == @policy")
    per_seed = seats.groupby("seed").agg(
        wins=("winner", "sum"),
        seats=("seat", "size"),
        points=("total", "sum"),
        rounds=("rounds", "sum"),
    )
    ppr = RatioSums.of(zip(per_seed.points, per_seed.rounds, strict=True)).estimate()
    index = RatioSums.of(zip(per_seed.wins, per_seed.seats / 2, strict=True)).estimate()
    return {
        "games": len(seats),
        "shuffles": len(per_seed),
        "points_per_round": ppr.value,
        "ppr_lo": ppr.lo,
        "ppr_hi": ppr.hi,
        "win_index": index.value,
        "win_index_lo": index.lo,
        "win_index_hi": index.hi,
    }


def _open(lake: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("FLIP7_DATA", str(lake))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/variants.py").run()
    assert not at.exception, at.exception[0].value
    return at


def test_variants_page_keeps_rulesets_apart(lake, monkeypatch):
    """Rulesets are picked one at a time (those played in both variants first): every chart
    and the table show 3.1 only, one bar per policy and variant, and the round scores are the
    rounds of the 3.1 cells alone, counted here from the rounds files."""
    at = _open(lake, monkeypatch)
    picker = at.selectbox(key="variants_ruleset:2")
    assert picker.options == ["3.1", "3.1(target=150)"] and picker.value == "3.1"
    drawn = charts(at)
    assert len(drawn) == 5
    for _, data in drawn[:4]:
        assert set(data["ruleset"]) == {"3.1"}
        assert not data.duplicated(["policy", "variant"]).any()  # one cell per bar slot
    assert set(at.dataframe[0].value["ruleset"]) == {"3.1"}
    scores = drawn[4][1]
    rounds = _table(lake, "rounds")
    for variant in ("classic", "vengeance"):
        games = _games(lake, (variant, "3.1", "ev,bust:0.25"))
        played = rounds.merge(games[["run", "game"]].drop_duplicates(), on=["run", "game"])
        want = played.groupby("score").size()
        got = scores[scores.variant == variant].set_index("score")["rounds"]
        assert got.to_dict() == want.to_dict()
    picker.select("3.1(target=150)").run()
    assert not at.exception
    assert "under ruleset `3.1(target=150)` was played in classic only" in at.info[0].value
    assert not at.get("vega_lite_chart")


def test_variants_page_tells_line_ups_apart_by_their_seats(lake, monkeypatch):
    """classic-c's "duel" seats count:1 where the others seat bust:0.25: two line-ups, each
    named with its seats, the one played in both variants first; its figures do not include
    classic-c's games, and they equal the ones recomputed here (games of the same seed, the
    replayed ones, one cluster)."""
    at = _open(lake, monkeypatch)
    picker = at.selectbox(key="variants_lineup:2:3.1")
    assert picker.options == ["duel (seats ev,bust:0.25)", "duel (seats ev,count:1)"]
    table = at.dataframe[0].value
    assert set(table["seating"]) == {"ev,bust:0.25"}
    for row in table.itertuples():
        want = _expected(lake, (row.variant, "3.1", "ev,bust:0.25"), row.policy)
        for col, value in want.items():
            assert getattr(row, col) == pytest.approx(value, rel=1e-9), (row.variant, col)
    classic_ev = table[(table.variant == "classic") & (table.policy == "ev")]
    assert classic_ev["games"].item() == 50 and classic_ev["shuffles"].item() == 30
    picker.select("duel (seats ev,count:1)").run()
    assert "was played in classic only" in at.info[0].value


def test_variants_page_says_when_runs_replay_each_other(lake, monkeypatch):
    """classic-a and classic-b share their root seed: the page names them and says that the
    intervals are clustered by shuffle; the table shows fewer shuffles than games."""
    at = _open(lake, monkeypatch)
    (warning,) = [w.value for w in at.warning]
    assert "classic-a, classic-b (root seed 31)" in warning and "not independent" in warning
    table = at.dataframe[0].value
    assert (table[table.variant == "vengeance"]["shuffles"] == 30).all()
