"""notes.py: unverified runs fold into one quiet line with the command; other notes stay."""

from __future__ import annotations

from dashboard import notes


def test_unverified_runs_fold_into_one_line_with_the_command_that_verifies():
    folded = notes.fold(
        [
            "run a: unverified: not verified since it was written; run `flip7 warehouse verify a`",
            "run b: unverified: its files changed since; run `flip7 warehouse verify b`",
            "run c: verified without replay: no game was re-simulated, so its labels are bound "
            "to its manifest only; run `flip7 warehouse verify c` (it replays a sample)",
            "run d: 2 committed shard(s) not in its manifest (0, 1): copied or stray files",
        ]
    )
    assert list(folded.unverified) == ["a", "b", "c"]
    assert folded.unverified["b"] == "its files changed since"
    assert folded.warnings == [
        "run d: 2 committed shard(s) not in its manifest (0, 1): copied or stray files"
    ]
    line = folded.quiet_line("/data/my lake")
    assert line is not None and "\n" not in line
    assert line.startswith("3 runs not fully verified (a, b, c)")  # c: without replay
    assert "`flip7 warehouse verify --data '/data/my lake'`" in line
    assert "- c: verified without replay" in folded.reasons()


def test_one_unverified_run_and_none():
    one = notes.fold(["run x: unverified: never; run `flip7 warehouse verify x`"])
    assert one.quiet_line("/d") == (
        "1 run not verified as it is now (x): `flip7 warehouse verify --data /d` checks it."
    )
    many = notes.fold([f"run r{i}: unverified: never; run `x`" for i in range(5)])
    assert "(r0, r1, r2 and 2 more)" in (many.quiet_line("/d") or "")
    assert notes.fold([]).quiet_line("/d") is None
