"""The Ratings page under AppTest: the dot plot ordered by rating, the field-size toggle, and
the calibration chart with its verdict."""

from __future__ import annotations

from tests.dashboard.test_app import charts, open_app


def test_ratings_page_orders_policies_and_follows_the_field_size_toggle(lake, monkeypatch):
    """Run `field` (ev, evc, bust:0.25, bustc:0.25 at 2-4 seats): pooled, every policy rated
    with ev at 0 and the table ordered by rating; at 3 players only the policies seated there;
    the calibration chart has one point per pair that met, and the page gives a verdict."""
    at = open_app(lake, monkeypatch, "views/ratings.py")
    assert "Ratings" in [t.value for t in at.title]
    table = at.dataframe[0].value
    assert set(table["policy"]) == {"ev", "evc", "bust:0.25", "bustc:0.25"}
    assert list(table["rating"]) == sorted(table["rating"], reverse=True)
    assert float(table.loc[table["policy"] == "ev", "rating"].iloc[0]) == 0.0
    assert (table["lo"] <= table["rating"]).all() and (table["rating"] <= table["hi"]).all()
    dots = [df for _, df in charts(at) if "rating" in df.columns]
    assert dots and set(dots[0]["policy"].dropna()) == set(table["policy"])
    calib = [df for _, df in charts(at) if "model_ahead" in df.columns]
    met = calib[0].dropna(subset=["meetings"]) if calib else None
    assert met is not None and len(met) and (met["meetings"] > 0).all()
    verdicts = [m.value for m in (*at.success, *at.warning)]
    assert any("pairs" in v for v in verdicts)
    control = at.segmented_control(key="ratings_scope:field")
    assert control.options == ["all field sizes", "2 players", "3 players", "4 players"]
    control.set_value("3 players").run()
    assert not at.exception
    at3 = at.dataframe[0].value
    assert set(at3["policy"]) == {"ev", "evc", "bust:0.25"}
    assert (at3["games"] <= table.set_index("policy").loc[at3["policy"], "games"].values).all()
