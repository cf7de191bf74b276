"""The pipeline's shard function through the kernel: the same Arrow tables, row for row."""

from __future__ import annotations

import numba  # noqa: F401  (a dependency: missing, it fails the suite rather than skipping it)
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flip7 import kernel
from flip7.events import EventKind, unfold_codes
from lakecontract import codec
from pipeline.schema import event_codes
from pipeline.shard import ShardTask, simulate_shard


@pytest.fixture(scope="module", autouse=True)
def compiled() -> kernel.LoadInfo:
    """Compile (or load from the cache) once for the whole module."""
    return kernel.load_info()


@pytest.mark.parametrize(
    "lineup, ruleset, rotate, capture",
    [
        (("ev", "sum:20", "bustc:0.25", "endgame"), "3.1", True, True),
        (("count:4", "evc", "ev"), "legacy(target=120,bonus=5)", False, True),
        (("sum:25", "bust:0.3"), "immediate", True, False),
        (("ev",) * 19, "3.1", True, True),
        (("sum:20",) * 4, "3.1(max_rounds=3)", True, True),
    ],
)
def test_kernel_shard_tables_equal_the_reference_ones(lineup, ruleset, rotate, capture):
    """events, rounds and games tables (schemas, dictionaries, every value) are identical."""
    task = ShardTask("r", 3, 1, 2, lineup, ruleset, "classic", 99, rotate, 1000, 17, 97, capture)
    expected = simulate_shard(task, engine="reference")
    got = simulate_shard(task, engine="kernel")
    for name, table in expected.items():
        assert got[name].schema.equals(table.schema), name
        assert got[name].equals(table), name
    assert got["games"].num_rows == 80 * len(lineup)
    # What a shard writes: the kernel's stored rows, built straight from its buffers, are the
    # reference's logical rows encoded (the same bytes and metadata) and decode back to them.
    written = simulate_shard(task, engine="kernel", stored=True)
    encoded = simulate_shard(task, engine="reference", stored=True)
    for name in ("events", "rounds"):
        assert written[name].schema.equals(codec.STORED[name]), name
        assert written[name].equals(encoded[name]), name
        assert written[name].schema.metadata == encoded[name].schema.metadata, name
        assert codec.logical(name, written[name]).equals(expected[name]), name
    for name in ("rollups", "games"):
        assert written[name].equals(expected[name]), name


def test_vengeance_shards_are_the_kernels_too():
    """A Vengeance shard (here the alternative deck, Brutal) runs in the kernel under auto, and
    its three tables equal the reference engine's value for value."""
    task = ShardTask(
        "r", 0, 0, 0, ("ev", "endgame", "bustc:0.3"), "3.1", "vengeance(deck=alt,brutal=1)",
        1, True, 0, 0, 40,
    )  # fmt: skip
    expected = simulate_shard(task, engine="reference")
    got = simulate_shard(task, engine="kernel")
    for name, table in expected.items():
        assert got[name].equals(table), name
    assert simulate_shard(task, engine="auto")["events"].equals(expected["events"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**40),
    lineup=st.lists(
        st.sampled_from(["ev", "sum:20", "bust:0.3", "endgame", "count:3"]), min_size=1, max_size=6
    ),
    variant=st.sampled_from(
        ["classic", "vengeance", "vengeance(deck=alt,brutal=1)", "classic(max_rounds=2)"]
    ),
)
def test_the_kernel_stores_each_event_as_the_fold_states(seed, lineup, variant):
    """The kernel writes events already folded and without round scores (flip7.kernel.core.emit);
    its stored rows equal flip7.events.store_games over the reference engine's events, and with
    the rounds table they give every event back."""
    ruleset, variant = (
        ("3.1(max_rounds=2)", "classic") if "max_rounds" in variant else ("3.1", variant)
    )
    task = ShardTask("r", 0, 0, 0, tuple(lineup), ruleset, variant, seed, True, 0, 0, 6)
    expected = simulate_shard(task, engine="reference")
    got = simulate_shard(task, engine="kernel")
    assert got["events"].equals(expected["events"])
    assert got["games"].equals(expected["games"])
    assert got["rounds"].equals(expected["rounds"])
    flat = event_codes(got["events"], got["rounds"])
    stored = np.asarray(got["events"].column("codes").combine_chunks().flatten())
    kept = (flat["code"] & 31) != EventKind.ROUND_SCORE
    assert np.array_equal(unfold_codes(stored), flat["code"][kept])
    logged = np.asarray(got["games"].column("events"))
    assert len(flat["code"]) == logged.sum() // len(lineup)


@pytest.mark.parametrize("variant", ["classic", "vengeance"])
def test_table_rows_survive_the_buffers_growing(variant):
    """The kernel records each round's code offset as it plays; a batch whose
    buffers start at one slot (so the kernel stops and restarts games many times) gives the
    same events and rounds columns as one that never grows, and the games' event counts equal
    the codes unfolded."""
    from flip7.kernel.batch import play_batch, rotation
    from flip7.kernel.columns import table_rows
    from flip7.policies import parse_policies
    from flip7.rules import parse_ruleset
    from flip7.variants import parse_variant

    lineup = parse_policies(["ev", "sum:20", "bust:0.3"])
    seats = rotation(3, np.arange(30) % 3)
    seeds = kernel.derive_seeds(5, 0, 0, 30)
    rules, var = parse_ruleset("3.1"), parse_variant(variant)
    outs = []
    for capacity in (None, 1):
        batch = play_batch(rules, lineup, seats, seeds, capacity=capacity, variant=var)
        events, rounds = table_rows(batch, seats, 100)
        folds = batch.go[:, 6]
        outs.append((events, rounds, batch.go[:, 3] + folds))
    (e1, r1, n1), (e2, r2, n2) = outs
    assert e1.keys() == e2.keys() and r1.keys() == r2.keys()
    for name in e1:
        assert np.array_equal(e1[name], e2[name]), name
    for name in r1:
        assert np.array_equal(r1[name], r2[name]), name
    assert np.array_equal(n1, n2)
    # every event: the stored ones unfolded, and a round score per round row
    assert n1.sum() == len(unfold_codes(e1["codes"])) + len(r1["game"])
    assert e1["game"][0] == 100 and len(e1["game"]) == 30
    assert e1["rounds"].sum() == len(e1["codes"]) and len(e1["rounds"]) == len(r1["game"]) // 3
