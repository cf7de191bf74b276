"""Every dashboard page under Streamlit's AppTest, on a small real lake: widgets change what
is shown, numbers come with their sample sizes, and no page raises."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import dashboard

APP = str(Path(dashboard.__file__).with_name("app.py"))


def open_app(
    lake: Path, monkeypatch: pytest.MonkeyPatch, page: str | None = None, run: str = "field"
) -> AppTest:
    """The app over `lake` showing `run` (and switched to `page`), with no exception."""
    monkeypatch.setenv("FLIP7_DATA", str(lake))
    at = AppTest.from_file(APP, default_timeout=60).run()
    if page:
        at.switch_page(page).run()
    if run:
        at.sidebar.selectbox(key="run").select(run).run()  # also: the router ran
    assert not at.exception, at.exception[0].value
    return at


def charts(at: AppTest) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """Each chart's Vega-Lite spec and its data (all datasets stacked)."""
    out = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        frames = [
            pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets
        ]
        out.append((spec, pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()))
    return out


def y_fields(spec: dict[str, Any]) -> set[str]:
    """The fields on the y channel of a chart and all its (nested) layers."""
    fields = {spec["encoding"]["y"]["field"]} if "y" in spec.get("encoding", {}) else set()
    for layer in spec.get("layer", []):
        fields |= y_fields(layer)
    return fields


def test_empty_lake_explains_how_to_run_a_tournament(empty_lake, monkeypatch):
    """An empty data root shows the tournament command for that root instead of an error."""
    at = open_app(empty_lake, monkeypatch, run="")
    assert at.title[0].value == "No tournament results yet"
    # A shipped spec's name: the command works for a pip-installed flip7, without a checkout.
    assert f"flip7 tournament run demo --data {empty_lake}" in at.code[0].value
    assert not at.get("vega_lite_chart")


def test_field_size_shows_win_rate_beside_points_with_sample_sizes(lake, monkeypatch):
    """Field size: win rate and points per round per policy of one line-up over the field sizes
    it was played at, with n; another line-up shows its own cells, never a blend."""
    at = open_app(lake, monkeypatch)
    assert at.title[0].value == "Field size"
    picker = at.selectbox(key="fs_lineup:field")
    assert picker.value == "field size"  # the line-up over most field sizes comes first
    assert set(picker.options) == {"field size", "ev", "evc", "bust", "bustc"}
    # The win index is the default view: one scale over field sizes, so crossovers show.
    assert at.segmented_control(key="fs_measure").value == "win index"
    assert at.subheader[0].value == "Adjusted win index"
    (win_spec, win), (ppr_spec, ppr), (both_spec, both) = charts(at)
    win = win[win["policy"].notna()]  # less the dashed line's datum (y = 1)
    assert "win_index" in y_fields(win_spec) and "points_per_round" in y_fields(ppr_spec)
    assert "win_index" in y_fields(both_spec) and both["points_per_round"].count() == len(win)
    assert set(win["policy"]) == {"ev", "bust:0.25"}
    assert set(win["players"]) == {2, 4} and len(win) == 4  # one point per cell and policy
    table = at.dataframe[0].value
    assert {"player_games", "games", "rounds"} <= set(table.columns)
    assert set(table["lineup"]) == {"field size"} and (table["games"] == 60).all()
    picker.select("evc").run()
    (_, win), _, _ = charts(at)
    win = win[win["policy"].notna()]
    assert set(win["policy"]) == {"evc", "bust:0.25"} and set(win["players"]) == {3}
    assert set(at.dataframe[0].value["lineup"]) == {"evc"}


def test_policy_filter_and_win_measure_change_the_charts(lake, monkeypatch):
    """Picking one policy leaves only its lines; the win-rate toggle switches the left chart."""
    at = open_app(lake, monkeypatch)
    at.sidebar.multiselect(key="f_policies:field").set_value(["ev"]).run()
    (_, win), (_, ppr), _ = charts(at)
    assert set(win["policy"].dropna()) == {"ev"} and set(ppr["policy"]) == {"ev"}
    at.segmented_control(key="fs_measure").set_value("win rate").run()
    assert at.subheader[0].value == "Win rate"
    assert "win_rate" in y_fields(charts(at)[0][0])


def test_card_counting_shows_the_paired_gain_with_intervals(lake, monkeypatch):
    """Card counting: evc vs ev at 3 players on common random numbers, per round and per game;
    every comparison names its two cells (bustc against its CRN twin line-up, paired, and
    against the "field size" line-up's bust:0.25, unpaired)."""
    at = open_app(lake, monkeypatch, "views/card_counting.py")
    (ppr_spec, ppr), (win_spec, _) = charts(at)
    assert {"ppr_gain", "ppr_gain_lo"} <= y_fields(ppr_spec)
    assert {"win_gain", "win_gain_lo"} <= y_fields(win_spec)
    table = at.dataframe[0].value
    assert set(table["comparison"]) == {
        "evc vs ev (evc vs ev)",
        "bustc:0.25 vs bust:0.25 (bustc vs bust)",
        "bustc:0.25 vs bust:0.25 (bustc vs field size)",
    }
    assert set(ppr["comparison"].dropna()) == set(table["comparison"])
    row = table[table["counting"] == "evc"].iloc[0]
    assert (row["base"], row["method"], row["players"]) == ("ev", "paired", 3)
    assert row["pairs"] == 60 and row["ppr_gain_lo"] <= row["ppr_gain"] <= row["ppr_gain_hi"]
    unpaired = table[table["method"] == "unpaired"].iloc[0]
    assert (unpaired["lineup"], unpaired["base_lineup"], unpaired["games"]) == (
        "bustc",
        "field size",
        120,  # 60 games of each line-up at 2 players
    )


def test_card_counting_comparison_picker_narrows_charts_and_table(lake, monkeypatch):
    """Keeping one comparison leaves only its points and rows."""
    at = open_app(lake, monkeypatch, "views/card_counting.py")
    picked = "bustc:0.25 vs bust:0.25 (bustc vs bust)"
    at.multiselect(key="cc_comparisons:field").set_value([picked]).run()
    for _, df in charts(at):
        assert set(df["comparison"].dropna()) == {picked}
    table = at.dataframe[0].value
    assert list(table["players"]) == [2] and list(table["base"]) == ["bust:0.25"]


def test_card_counting_explains_a_run_without_a_counting_pair(lake, monkeypatch):
    """Choosing a run with no counting twin says what to put in a spec instead of a chart."""
    at = open_app(lake, monkeypatch, "views/card_counting.py")
    at.sidebar.selectbox(key="run").select("other").run()
    assert not at.exception and not at.get("vega_lite_chart")
    assert "non-counting twin" in at.info[0].value


def test_policy_comparison_follows_the_field_size_and_line_up_controls(lake, monkeypatch):
    """League over all cells; head to head, round scores and rates in the cell picked (a field
    size, then one of the line-ups played at it)."""
    at = open_app(lake, monkeypatch, "views/policies.py")
    league = at.dataframe[0].value
    assert list(league["place"]) == [1, 2, 3, 4]
    assert set(league["policy"]) == {"ev", "bust:0.25", "evc", "bustc:0.25"}
    assert {"win_index_lo", "lineups", "games"} <= set(league.columns)
    assert at.segmented_control(key="pc_players:field").options == ["2", "3", "4"]
    assert at.selectbox(key="pc_lineup:field:2").options == ["field size", "bust", "bustc"]
    heat = [df for spec, df in charts(at) if "ahead_share" in df.columns][0]
    assert set(heat["policy"]) == {"ev", "bust:0.25"}  # the "field size" line-up's seats
    at.selectbox(key="pc_lineup:field:2").select("bustc").run()
    heat = [df for spec, df in charts(at) if "ahead_share" in df.columns][0]
    assert set(heat["policy"]) == {"ev", "bustc:0.25"}
    at.segmented_control(key="pc_players:field").set_value(3).run()
    assert "Head to head at 3 players" in [s.value for s in at.subheader]
    at.selectbox(key="pc_lineup:field:3").select("evc").run()
    heat = [df for spec, df in charts(at) if "ahead_share" in df.columns][0]
    assert set(heat["policy"]) == {"evc", "bust:0.25"}
    rates = at.dataframe[1].value
    assert set(rates["policy"]) == {"evc", "bust:0.25"} and (rates["rounds"] > 0).all()
    assert set(rates["lineup"]) == {"evc"} and (rates["games"] == 60).all()


def test_replay_steps_through_a_game_card_by_card(lake, monkeypatch):
    """Next card advances one card; End reaches the game end, whose winner has the winning total."""
    at = open_app(lake, monkeypatch, "views/replay.py")
    heading = at.subheader[0].value
    assert heading.startswith("Round 1 · card 0 of ")
    last = int(heading.rsplit(" ", 1)[1])
    at.button(key="rp_next").click().run()
    assert at.subheader[0].value == f"Round 1 · card 1 of {last}"
    assert any("draws" in m.value for m in at.markdown)
    at.button(key="rp_last").click().run()
    assert at.subheader[0].value.endswith(f"card {last} of {last}")
    assert any(" wins with " in m.value for m in at.markdown)
    totals = [
        int(m.value.split("game total **")[1].split("**")[0])
        for m in at.markdown
        if "game total **" in m.value
    ]
    assert len(totals) >= 2  # one line per seat
    assert any(f"won with {max(totals)}" in c.value for c in at.caption)


def test_replay_picks_another_game(lake, monkeypatch):
    """Choosing another game shows that game from its first step."""
    at = open_app(lake, monkeypatch, "views/replay.py")
    at.button(key="rp_next").click().run()
    picker = at.selectbox(key="rp_game:field")
    other = picker.options[5]
    picker.select_index(5).run()
    assert at.subheader[0].value.startswith("Round 1 · card 0 of ")
    game = int(other.split()[1])
    assert at.number_input(key="rp_id:field").value == game
    assert any(c.value.startswith(f"game {game} · ") for c in at.caption)


def test_runs_page_lists_every_run_and_the_ruleset_filter_narrows_the_choice(lake, monkeypatch):
    """Runs: one row per run with status and sizes; a ruleset filter leaves only its runs."""
    at = open_app(lake, monkeypatch, "views/runs.py")
    runs = at.dataframe[0].value
    assert {"field", "other"} <= set(runs["run"]) and set(runs["status"]) == {"complete"}
    assert (runs["games"] == runs["planned_games"]).all()
    at.sidebar.selectbox(key="ruleset").select("immediate").run()
    assert at.sidebar.selectbox(key="run").options == ["other"]
    assert "complete: 40 games; ruleset immediate" in at.sidebar.caption[0].value
    assert at.subheader[0].value == "Run other: complete"


def test_a_link_with_run_in_the_url_opens_that_run(lake, monkeypatch):
    """?run=NAME picks the run (so a copied link shows the same view)."""
    monkeypatch.setenv("FLIP7_DATA", str(lake))
    for name in ("other", "field"):
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params["run"] = name
        at.run()
        assert at.sidebar.selectbox(key="run").value == name


def test_replay_jumps_to_a_round_and_lists_games_of_the_chosen_policies(lake, monkeypatch):
    """Jump to round 2 shows round 2's first card; a policy filter lists only its games."""
    at = open_app(lake, monkeypatch, "views/replay.py")
    game = at.number_input(key="rp_id:field").value
    at.selectbox(key=f"rp_round:field:{game}").select(2).run()
    assert at.subheader[0].value.startswith("Round 2 · card ")
    assert any("draws" in m.value for m in at.markdown)
    at.sidebar.multiselect(key="f_policies:field").set_value(["evc"]).run()
    picker = at.selectbox(key="rp_game:field")
    assert picker.options and all("evc" in label for label in picker.options)


def test_a_damaged_lake_says_what_is_wrong_instead_of_raising(lake, tmp_path, monkeypatch):
    """A manifest that is not JSON: its run is left out, a caption names it and the problem, and
    the other runs still show (one bad manifest does not blank the dashboard)."""
    damaged = tmp_path / "damaged"
    shutil.copytree(lake, damaged)
    (damaged / "runs" / "other" / "manifest.json").write_text("{not json")
    at = open_app(damaged, monkeypatch, run="")
    assert not at.exception
    (caption,) = [c.value for c in at.caption if "run other:" in c.value]
    assert "left out" in caption and "not readable JSON" in caption
    assert "other" not in at.sidebar.selectbox(key="run").options
    assert len(at.get("vega_lite_chart")) > 0


def test_variant_filter_and_a_vengeance_game_replayed_to_its_end(lake, monkeypatch):
    """The variant filter leaves the Vengeance run; its games replay with Vengeance's moves."""
    at = open_app(lake, monkeypatch, "views/replay.py", run="")
    at.sidebar.selectbox(key="variant").select("vengeance").run()
    assert at.sidebar.selectbox(key="run").options == ["venge"]
    texts: list[str] = []
    for index in range(6):  # a few games: Vengeance cards show up within them
        at.selectbox(key="rp_game:venge").select_index(index).run()
        at.button(key="rp_last").click().run()
        assert not at.exception, at.exception[0].value
        texts += list(at.dataframe[0].value["event"])
    assert any(" wins with " in t for t in texts)
    assert any(re.search(r" gives | goes from | steals | loses ", t) for t in texts)
    assert not any("Flip Three" in t or "duplicate -1" in t for t in texts)
    at.switch_page("views/field_size.py").run()
    assert not at.exception and len(at.get("vega_lite_chart")) == 3


def test_variants_page_sets_classic_against_vengeance(lake, monkeypatch):
    """Classic vs Vengeance: points, win index, bust and Flip 7 rates per policy with a bar per
    variant, and the round-score distribution per variant, for one line-up (named alike in both
    runs) at one size; the policy picker narrows them."""
    at = open_app(lake, monkeypatch, "views/variants.py", run="")
    assert at.title[0].value == "Classic vs With a Vengeance"
    # 2 players: the field run's 3.1 (classic and Vengeance) comes before the other run's rules
    assert at.selectbox(key="variants_ruleset:2").options == ["3.1", "immediate"]
    assert at.selectbox(key="variants_lineup:2:3.1").value == "field size"
    drawn = charts(at)
    assert len(drawn) == 5
    for _, data in drawn[:4]:
        assert set(data["variant"]) == {"classic", "vengeance"}
    assert set(drawn[4][1]["variant"]) == {"classic", "vengeance"}
    at.multiselect(key="variants_policies:2:3.1:field size").set_value(["ev"]).run()
    assert not at.exception
    assert set(charts(at)[0][1]["policy"]) == {"ev"}


def test_runs_page_shows_a_sequential_test(tmp_path, monkeypatch):
    """Runs: a run with a sequential test shows its looks, the decision on the last."""
    from tests.pipeline.test_sprt_run import run_emulated, sprt_plan

    manifest = run_emulated(sprt_plan(), str(tmp_path))
    at = open_app(tmp_path, monkeypatch, "views/runs.py", run="s")
    waves = at.dataframe[-1].value
    assert waves["games"].tolist() == [w["games"] for w in manifest["stop"]["waves"]]
    assert waves["decision"].tolist()[-1] == "H1"
    assert any("Sequential test: endgame − ev" in h.value for h in at.subheader)


def test_runs_page_shows_a_ranking_test(tmp_path, monkeypatch):
    """Runs: a league that stops by its ranking shows each adjacent pair's verdict, headed by
    the same line `flip7 report` gives."""
    from tests.pipeline.test_ranking_run import league_plan
    from tests.pipeline.test_sprt_run import run_emulated

    manifest = run_emulated(league_plan(), str(tmp_path))
    at = open_app(tmp_path, monkeypatch, "views/runs.py", run="lg")
    assert not at.exception
    assert any(h.value == "Ranking test: adjacent pairs" for h in at.subheader)
    n = manifest["stop"]["decision"]["games"]
    assert any(f"every adjacent pair decided after {n:,} games" in c.value for c in at.caption)
    pairs = at.dataframe[-1].value
    assert pairs["place"].tolist() == [1, 2]
    assert len(at.get("vega_lite_chart")) == 2  # the runs' games, then the pairs
    assert sorted(pairs["verdict"]) == ["equivalent", "separated"]


def test_a_link_to_a_run_the_lake_lacks_lists_the_runs_it_holds(lake, monkeypatch):
    """?run=NAME of a run not in the lake is an error naming it and listing the runs there,
    not the first run shown in its place."""
    monkeypatch.setenv("FLIP7_DATA", str(lake))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["run"] = "nope"
    at.run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "`nope`" in error and "`field`" in error and "`other`" in error
    assert not at.get("vega_lite_chart") and not at.sidebar.selectbox
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["variant"] = "nope"
    at.run()
    assert "variant `nope`" in at.error[0].value and "`classic`" in at.error[0].value


def test_pages_show_only_the_filters_they_read_and_keep_the_choice(lake, monkeypatch):
    """Classic vs Vengeance pools every run: no run or policy filter; Card counting has no
    policy picker; the run chosen before survives a visit to a page without the filter."""
    at = open_app(lake, monkeypatch, "views/card_counting.py", run="other")
    assert not at.sidebar.multiselect and at.sidebar.selectbox(key="run").value == "other"
    at.switch_page("views/variants.py").run()
    assert not at.exception and not at.sidebar.selectbox and not at.sidebar.multiselect
    assert any("do not apply" in c.value for c in at.sidebar.caption)
    at.switch_page("views/field_size.py").run()
    assert at.sidebar.selectbox(key="run").value == "other"
    assert at.sidebar.multiselect(key="f_policies:other")


def test_variants_page_with_one_variant_says_so_and_draws_nothing(tmp_path, monkeypatch):
    """A lake of classic runs only: the page says there is nothing to compare and draws no
    chart (a lone bar per policy would read as a comparison)."""
    from tests.dashboard.lake import FIELD_SPEC, write_run

    write_run(FIELD_SPEC, tmp_path)
    monkeypatch.setenv("FLIP7_DATA", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/variants.py").run()
    assert not at.exception
    assert "one variant only (classic)" in at.info[0].value
    assert not at.get("vega_lite_chart") and not at.dataframe


def test_replay_opens_any_game_by_id(lake, monkeypatch):
    """The game id box spans every game id of the run (not only the listed ones) and opens the
    game typed, from its first card."""
    at = open_app(lake, monkeypatch, "views/replay.py")
    box = at.number_input(key="rp_id:field")
    assert box.min == 0 and box.max > 0
    last = int(box.max)
    box.set_value(last).run()
    assert not at.exception and not at.error
    assert any(c.value.startswith(f"game {last} · ") for c in at.caption), [
        c.value for c in at.caption
    ]
    assert at.subheader[0].value.startswith("Round 1 · card 0 of ")


def test_replay_draws_cards_as_coloured_chips_by_kind(lake, monkeypatch):
    """The board shows each seat's cards as badges coloured by kind, with the key below."""
    at = open_app(lake, monkeypatch, "views/replay.py")
    at.button(key="rp_last").click().run()
    seats = [m.value for m in at.markdown if "game total **" in m.value]
    assert any(":blue-badge[" in line for line in seats)  # number cards drawn so far
    assert any(":orange-badge[action]" in c.value for c in at.caption)


def test_the_first_page_computes_only_the_marts_it_reads(tmp_path, monkeypatch):
    """A new server computes no mart up front: the Field size page computes its own (runs,
    win rates, points per round), Policy comparison adds its own later."""
    from dashboard import data
    from tests.dashboard.lake import FIELD_SPEC, write_run

    write_run(FIELD_SPEC, tmp_path)
    at = open_app(tmp_path, monkeypatch, run="")
    assert at.title[0].value == "Field size" and len(at.get("vega_lite_chart")) == 3
    wh = data.warehouse(str(tmp_path))
    assert wh.computed == {"runs", "win_rates", "points_per_round"}
    at.switch_page("views/policies.py").run()
    assert not at.exception
    assert {"league", "head_to_head", "round_distribution", "round_rates"} <= wh.computed
    assert "card_counting" not in wh.computed and "variant_comparison" not in wh.computed


def test_league_says_which_field_sizes_each_policy_was_seen_at(lake, monkeypatch):
    """evc played only 3-player tables, ev played 2, 3 and 4: the league names each policy's
    field sizes and warns; ranking at one field size shows only that size's cells."""
    at = open_app(lake, monkeypatch, "views/policies.py")
    (league_spec, league), *_ = charts(at)
    assert "evc (3 players)" in set(league["seen_at"])
    assert "ev (2, 3, 4 players)" in set(league["seen_at"])
    (warning,) = [w.value for w in at.warning]
    assert "evc: 3" in warning and "ev: 2, 3, 4" in warning
    at.segmented_control(key="pc_league_scope:field").set_value("3 players").run()
    assert not at.exception and not at.warning
    (_, cells), *_ = charts(at)
    assert set(cells["players"].dropna()) == {3} and "evc · evc" in set(cells["cell"])
    assert set(at.dataframe[0].value["players"]) == {3}


def test_unverified_runs_take_one_quiet_line_with_the_verify_command(lake, monkeypatch):
    """The lake's three unverified runs: one caption naming them and the command that verifies
    them (not a warning per run), on every page."""
    at = open_app(lake, monkeypatch)
    for page in (None, "views/policies.py"):
        if page:
            at.switch_page(page).run()
        lines = [c.value for c in at.caption if "verif" in c.value]
        assert lines == [
            "3 runs not verified as they are now (field, other, venge): "
            f"`flip7 warehouse verify --data {lake}` checks them."
        ], lines
        assert not [c for c in at.caption if ":warning:" in c.value]


def test_progress_of_the_tables_shows_in_the_page_not_only_the_sidebar(lake, monkeypatch):
    """While the other pages' tables are being prepared, the page itself says how far that got
    (the sidebar is collapsed on a phone); once none is missing, the line goes."""
    at = open_app(lake, monkeypatch)
    assert not at.main.get("progress")  # nothing prepared in the background in tests: gone
    monkeypatch.setattr(dashboard.data, "progress", lambda root: (7, 11))
    at.run()
    (bar,) = at.main.get("progress")
    assert "7 of 11 tables ready" in bar.proto.text
    assert [p.proto.text for p in at.sidebar.get("progress")] == [bar.proto.text]


@pytest.mark.parametrize(
    "page",
    [
        "views/field_size.py",
        "views/card_counting.py",
        "views/policies.py",
        "views/variants.py",
        "views/runs.py",
    ],
)
def test_tables_show_no_raw_none_and_one_column_per_interval(lake, monkeypatch, page):
    """No table cell a page shows is missing (Streamlit would print "None"), and no table
    shows an interval as two "95% low/high" columns."""
    at = open_app(lake, monkeypatch, page, run="" if page == "views/variants.py" else "field")
    assert at.dataframe
    for table in at.dataframe:
        frame = table.value
        order = list(table.proto.column_order) or list(frame.columns)
        shown = frame[[c for c in order if c in frame.columns]]
        gaps = {c: int(n) for c, n in shown.isna().sum().items() if n}
        assert not gaps, f"{page}: missing values shown as None in {gaps}"
        assert not [c for c in order if c.endswith(("_lo", "_hi"))], order
