"""A sequential test run end to end without Ray: the decision and the games it took do not
depend on the order in which shards finish; --resume reaches the same decision; the shards'
paired sums agree with the per-policy statistics; status and plan-games print it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from flip7.cli import main
from pipeline import sprt
from pipeline.lake import Lake
from pipeline.plan import Plan, make_plan
from pipeline.run import finish, prepare, record_shard, run_tournament
from pipeline.sequential import Stopper
from pipeline.spec import parse_spec
from pipeline.task import run_shard
from tests.pipeline.test_sprt import SPRT_TEMPLATE

# endgame beats ev heads-up by about 7 points of win rate: with h1 = 3 points the test accepts
# H1 after a few 250-game waves, far below the ceiling.
SPEC = SPRT_TEMPLATE.format(seed=7, shard_size=250, h1=0.03, max_games="20_000")


def sprt_plan(text: str = SPEC) -> Plan:
    return make_plan(parse_spec(text))


def run_emulated(
    plan: Plan, root: str, *, seed: int | None = None, window: int = 1, limit: int | None = None
) -> dict[str, Any]:
    """The driver's loop without Ray: `window` shards in flight, the one that finishes next
    drawn at random (`seed`), the Stopper fed after each, no new shard once it decides.
    `limit`: stop after that many shards, as a killed driver would (no finish)."""
    lake = Lake.open(root)
    manifest, todo = prepare(lake, plan, resume=True, overwrite=False)
    stopper = Stopper(lake, plan, manifest)
    queue = [] if stopper.decided else list(todo)
    pending: list[Any] = []
    draw = random.Random(seed)
    done = 0
    while queue or pending:
        while queue and len(pending) < window:
            pending.append(queue.pop(0))
        task = pending.pop(draw.randrange(len(pending)) if seed is not None else 0)
        record_shard(manifest, task, run_shard(task, lake.uri))
        done += 1
        if stopper.record():
            queue.clear()
        if limit is not None and done >= limit:
            lake.write_manifest(manifest)
            return manifest
    finish(lake, manifest, {})
    return manifest


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The test run in plan order, one shard at a time."""
    root = tmp_path_factory.mktemp("sprt-ref")
    return root, run_emulated(sprt_plan(), str(root))


def test_decides_early_and_records_every_look(reference: tuple[Path, dict[str, Any]]) -> None:
    """H1 is accepted after a few waves, far below the ceiling; every look is in the manifest
    (games growing by a wave, the last LLR beyond the upper bound) and the run is complete."""
    _, m = reference
    stop = m["stop"]
    decision = stop["decision"]
    assert decision["result"] == sprt.H1 and m["status"] == "complete"
    looks = stop["waves"]
    assert [w["games"] for w in looks] == [250 * (k + 1) for k in range(len(looks))]
    assert 2 <= len(looks) and decision["games"] == looks[-1]["games"] < 20_000
    assert looks[-1]["llr"] >= stop["bounds"][1] > max(w["llr"] for w in looks[:-1])
    assert len(m["shards"]) == len(looks)  # one at a time: nothing ran past the decision


@pytest.mark.parametrize("seed", [1, 2])
def test_same_decision_whatever_the_completion_order(
    reference: tuple[Path, dict[str, Any]], tmp_path: Path, seed: int
) -> None:
    """Four shards in flight finishing in a random order: shards past the decision are run and
    kept, but the looks, the decision and the games it took are the reference's, bit for bit."""
    _, ref = reference
    m = run_emulated(sprt_plan(), str(tmp_path), seed=seed, window=4)
    assert m["stop"] == ref["stop"]
    assert len(m["shards"]) > len(ref["shards"])  # the ones running when it decided
    assert m["status"] == "complete"


def test_resume_continues_the_same_test(
    reference: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A run killed after two shards (no decision yet), then resumed: the same looks and the
    same decision as the uninterrupted run; resuming a decided run runs nothing (no Ray)."""
    _, ref = reference
    plan = sprt_plan()
    first = run_emulated(plan, str(tmp_path), limit=2)
    assert first["status"] == "running" and first["stop"]["decision"] is None
    assert len(first["stop"]["waves"]) == 2
    m = run_emulated(plan, str(tmp_path), seed=3, window=3)
    assert m["stop"] == ref["stop"]
    report = run_tournament(plan, str(tmp_path), resume=True, progress=False)
    assert report.ran == [] and report.status == "complete"
    assert Lake.open(str(tmp_path)).load_manifest("s")["stop"] == ref["stop"]


def test_resume_with_another_test_is_refused(
    reference: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A run resumed with different [stop] parameters is refused, naming the field."""
    plan = sprt_plan()
    run_emulated(plan, str(tmp_path), limit=1)
    with pytest.raises(ValueError, match=r"stop\.h1: run has 0\.03, spec gives 0\.05"):
        run_emulated(sprt_plan(SPEC.replace("h1 = 0.03", "h1 = 0.05")), str(tmp_path))


def test_inconclusive_at_the_ceiling(tmp_path: Path) -> None:
    """With a ceiling of two waves the test ends inconclusive there, and the run is complete."""
    m = run_emulated(
        sprt_plan(SPEC.replace("20_000", "500").replace("0.03", "0.005")), str(tmp_path)
    )
    decision = m["stop"]["decision"]
    assert decision["result"] == sprt.INCONCLUSIVE and decision["games"] == 500
    assert m["status"] == "complete" and len(m["stop"]["waves"]) == 2


def test_paired_sums_agree_with_the_policy_statistics(
    reference: tuple[Path, dict[str, Any]],
) -> None:
    """Heads-up, each shard's paired sums are the per-policy sums differenced: sum y of the win
    metric = endgame's wins - ev's, of points = endgame's points - ev's; sum n = the rounds."""
    _, m = reference
    for entry in m["shards"].values():
        a, b = entry["stats"]["endgame"], entry["stats"]["ev"]
        win, pts = entry["compare"]["win"], entry["compare"]["points"]
        assert win[0] == pts[0] == a[0] == entry["games"]
        assert win[1] == a[1] - b[1] and win[2] == entry["games"]
        assert pts[1] == a[6] - b[6] and pts[2] == a[7]


def test_a_missing_compare_entry_is_read_from_the_games_file(
    reference: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A shard recorded without paired sums (an older worker) is read from its games file: the
    same looks."""
    root, ref = reference
    lake = Lake.open(str(root))
    manifest = lake.load_manifest("s")
    for entry in manifest["shards"].values():
        del entry["compare"]
    Stopper(lake, sprt_plan(), manifest)
    assert manifest["stop"] == ref["stop"]


def stopped_status(
    lake: tuple[Path, dict[str, Any]], run: str, capsys: pytest.CaptureFixture[str]
) -> tuple[str, int]:
    """`flip7 tournament status RUN` over a (root, manifest) lake of a run that stops by a test
    (the command succeeding), and the games its decision took."""
    root, manifest = lake
    assert main(["tournament", "status", run, "--data", str(root)]) == 0
    return capsys.readouterr().out, manifest["stop"]["decision"]["games"]


def test_status_and_plan_games_print_the_test(
    reference: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    """`tournament status` shows the test, its decision and its last looks; `plan-games` sizes
    the fixed-size test (108,222 games for one point of win rate at alpha = beta = 0.05)."""
    root = reference[0]
    text, n = stopped_status(reference, "s", capsys)
    assert "sequential test (SPRT) of endgame − ev (win rate)" in text
    assert f"H1 accepted after {n:,} games: endgame − ev = +" in text
    assert "percentage points of win rate (95%)" in text
    assert main(["plan-games", "--difference", "0.01"]) == 0
    assert "fixed-size test (one-sided): 108,222 games" in capsys.readouterr().out
    assert main(["plan-games", "--run", "s", "--data", str(root), "--difference", "0.01"]) == 0
    assert "measured on run s" in capsys.readouterr().out


def test_fixed_run_with_compare_reports_the_difference(tmp_path: Path) -> None:
    """A fixed-size run with [stop] compare plays all its games and reports A - B with its
    interval and the one-sided test's verdict."""
    text = SPEC.replace('test = "sprt"', 'test = "fixed"').replace("max_games = 20_000", "")
    plan = make_plan(parse_spec(text.replace("[[lineups]]", "games = 500\n[[lineups]]")))
    lake = Lake.open(str(tmp_path))
    manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
    for task in todo:
        record_shard(manifest, task, run_shard(task, lake.uri))
    finish(lake, manifest, {})
    from pipeline.sequential import summary_lines

    lines = summary_lines(lake, manifest)
    assert lines[0] == "fixed-size comparison of endgame − ev (win rate)"
    assert (
        "accepted after 500 games (fixed size, one-sided at alpha 0.05): endgame − ev" in lines[1]
    )


def test_points_metric_decides_on_points_per_round(tmp_path: Path) -> None:
    """metric = 'points': the test is on points per round. endgame scores fewer points per
    round than ev (it coasts when ahead), so 'endgame beats ev by half a point per round' is
    rejected (H0), and the estimate is the difference of the two policies' points per round
    over the games the test used."""
    text = SPEC.replace("h1 = 0.03", "h1 = 0.5\nmetric = 'points'")
    m = run_emulated(sprt_plan(text), str(tmp_path))
    decision = m["stop"]["decision"]
    assert decision["result"] == sprt.H0 and decision["estimate"] < 0
    used = [m["shards"][str(i)] for w in m["stop"]["waves"] for i in w["shards"]]
    a = [sum(e["stats"]["endgame"][k] for e in used) for k in (6, 7)]
    b = [sum(e["stats"]["ev"][k] for e in used) for k in (6, 7)]
    assert decision["estimate"] == pytest.approx(a[0] / a[1] - b[0] / b[1])
