"""The warehouse over "With a Vengeance" runs: verify rebuilds their rounds with the variant's
rules, catches damage, and the marts filter by variant next to a classic run."""

from __future__ import annotations

from pathlib import Path

import pytest

from flip7.events import EventKind
from warehouse import connect, queries, verify

from .lakes import shard_path, write_run
from .test_verify import edit, failed


@pytest.fixture(scope="module")
def mixed_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake with a classic run (t2) and two Vengeance runs (Brutal; the alt deck)."""
    root = tmp_path_factory.mktemp("vlake") / "data"
    for run in ("t2", "v1", "v2"):
        write_run(root, run)
    return root


def test_verify_rebuilds_vengeance_rounds_from_events(mixed_lake: Path) -> None:
    """Steals, swaps, discards, /2, -N, The Zero, Lucky 13 and Brutal penalties all rebuild to
    the engine's round scores: every check passes."""
    result = verify(mixed_lake)
    assert result.ok, failed(result)
    assert set(result.runs) == {"t2", "v1", "v2"}


def test_a_seat_the_round_ends_before_its_deal_verifies(tmp_path: Path) -> None:
    """A round can end before every seat is dealt a card (run v3: game 0's first round ends at a
    Flip 7 during the deal, seats 6 and 7 undealt). Those seats have no stored event in that
    round, the files leaving the round scores to the rounds table; their empty rounds still
    rebuild, verify passes, and stg_events gives back every seat's ROUND_SCORE."""
    root = tmp_path / "data"
    write_run(root, "v3")
    con = connect(root)
    seats = con.execute(
        "SELECT list_sort(list(DISTINCT player)), count(*) FILTER (kind = 15) FROM stg_events "
        "WHERE game = 0 AND round = 1 AND player >= 0"
    ).fetchone()
    assert seats == ([0, 1, 2, 3, 4, 5, 6, 7], 8)
    dealt = con.execute(
        "SELECT list_sort(list(DISTINCT player)) FROM stg_events "
        "WHERE game = 0 AND round = 1 AND player >= 0 AND kind <> 15"
    ).fetchone()
    assert dealt == ([0, 1, 2, 3, 4, 5],)
    result = verify(root, "v3")
    assert result.ok, failed(result)


def test_verify_catches_an_edited_vengeance_score(mixed_lake: Path, tmp_path: Path) -> None:
    """A changed round score in a Vengeance run disagrees with its events."""
    import shutil

    root = tmp_path / "data"
    shutil.copytree(mixed_lake, root)
    task = write_run(tmp_path / "scratch", "v1")[0]  # the same plan: find v1's first shard file
    edit(shard_path(root, "rounds", task), "score", 3, 5)
    assert "assert_rounds_match_events" in failed(verify(root, "v1"))


def test_marts_filter_by_variant_and_label_vengeance_events(mixed_lake: Path) -> None:
    """win_rates(variant=...) keeps one variant; the timeline names Vengeance kinds and cards."""
    con = connect(mixed_lake)
    brutal = queries.win_rates(con, variant="vengeance(brutal=1)")
    assert set(brutal.run) == {"v1"} and len(brutal) == 4
    classic = queries.win_rates(con, variant="classic")
    assert set(classic.run) == {"t2"}
    runs = queries.runs(con)
    assert dict(zip(runs.run, runs.variant, strict=True))["v2"] == "vengeance(deck=alt)"
    names = {k.name.lower() for k in EventKind}
    timeline = queries.game_timeline(con, "v1", 0)
    assert set(timeline.kind_name) <= names
    cards = set(timeline.card_label.dropna())
    assert cards and all(isinstance(c, str) for c in cards)
