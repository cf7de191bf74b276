"""The dashboard over a lake in a bucket: `flip7 dashboard --data s3://...` accepts it, and the
app (its data layer and every page) reads it in place."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dashboard
from dashboard import cli

APP = str(Path(dashboard.__file__).with_name("app.py"))


def test_dashboard_takes_an_s3_uri(lakes: tuple[str, str]) -> None:
    uri, _ = lakes
    assert cli.data_dir(uri) == uri
    with pytest.raises(OSError, match="bucket 'no-such-bucket-here' .* does not exist"):
        cli.data_dir("s3://no-such-bucket-here/lake")


def test_pages_read_the_bucket(lakes: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs page lists the bucket's run and the field-size page shows its figures, the
    same as over the local copy."""
    shown = {}
    for root in lakes:
        monkeypatch.setenv("FLIP7_DATA", root)
        at = AppTest.from_file(APP, default_timeout=120).run()
        assert not at.exception, at.exception
        at.sidebar.selectbox(key="run").select("t").run()
        assert not at.exception, at.exception
        shown[root] = [df.value.to_csv() for df in at.dataframe]
        assert shown[root]
    uri, local = lakes
    assert shown[uri] == shown[local]
