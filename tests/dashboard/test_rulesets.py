"""A run that plays its line-ups under several rulesets, in the dashboard: the Rule choices page
sets them side by side, and the per-run pages show one ruleset at a time (never a blend)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.lake import FIELD_SPEC, write_run
from tests.dashboard.test_app import APP, charts

RULES_SPEC = """
name = "rules"
seed = 21
games = 40
shard_size = 40
rulesets = ["3.1", "legacy(target=150)"]

[[lineups]]
name = "duel"
seats = ["ev", "bust:0.25"]
"""


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rules-dash")
    write_run(RULES_SPEC, root)
    write_run(FIELD_SPEC, root)
    return root


def _open(lake: Path, monkeypatch: pytest.MonkeyPatch, page: str, run: str) -> AppTest:
    monkeypatch.setenv("FLIP7_DATA", str(lake))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(page).run()
    at.sidebar.selectbox(key="run").select(run).run()
    assert not at.exception, at.exception[0].value
    return at


def test_rule_choices_page_sets_the_rulesets_side_by_side(lake, monkeypatch):
    """Each chart has a bar per ruleset with its interval; the table a row per ruleset."""
    at = _open(lake, monkeypatch, "views/rulesets.py", "rules")
    assert at.title[0].value == "Rule choices"
    drawn = charts(at)
    assert len(drawn) == 5
    for _, df in drawn:
        assert set(df["ruleset"]) == {"3.1", "legacy(target=150)"}
    table = at.dataframe[0].value
    assert list(table["ruleset"]) == ["3.1", "legacy(target=150)"]
    assert (table["games"] == 40).all()
    assert (table["rounds_per_game_lo"] < table["rounds_per_game"]).all()


def test_rule_choices_page_with_one_ruleset_says_so(lake, monkeypatch):
    """A run of one ruleset: nothing to compare, no chart."""
    at = _open(lake, monkeypatch, "views/rulesets.py", "field")
    assert "plays one ruleset (3.1)" in at.info[0].value
    assert not at.get("vega_lite_chart")


def test_per_run_pages_show_one_ruleset_at_a_time(lake, monkeypatch):
    """The field-size page of a two-ruleset run shows the rules picked under the run (the
    first by default); the Ruleset filter picks them too and lists every run's rulesets."""
    at = _open(lake, monkeypatch, "views/field_size.py", "rules")
    picker = at.sidebar.selectbox(key="f_ruleset:rules")
    assert picker.options == ["3.1", "legacy(target=150)"] and picker.value == "3.1"
    assert "rulesets 3.1, legacy(target=150)" in at.sidebar.caption[0].value
    assert set(at.dataframe[0].value["policy"]) == {"ev", "bust:0.25"}
    first = at.dataframe[0].value
    assert len(first) == 2  # one cell: two policies, not two rulesets pooled
    picker.select("legacy(target=150)").run()
    assert not at.exception
    second = at.dataframe[0].value
    assert len(second) == 2 and second["rounds"].sum() < first["rounds"].sum()  # target 150
    ruleset = at.sidebar.selectbox(key="ruleset")
    assert "legacy(target=150)" in ruleset.options
    ruleset.select("legacy(target=150)").run()
    assert at.sidebar.selectbox(key="run").options == ["rules"]
