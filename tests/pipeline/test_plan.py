"""The plan: cells, game ids, common-random-number pairs and shards, without Ray."""

from __future__ import annotations

import pytest

from pipeline.plan import make_plan
from pipeline.spec import parse_spec
from tests.pipeline.helpers import small_plan


def test_game_ids_are_contiguous_and_unique() -> None:
    """Cell i's games take ids [game_offset, game_offset + games), one block after another."""
    plan = small_plan()
    offset = 0
    for cell in plan.cells:
        assert cell.game_offset == offset
        offset += cell.games
    assert plan.games == offset == 480


def test_shards_cover_each_cell_exactly_once() -> None:
    """Shards are numbered 0..n-1 and tile every cell's game range without overlap."""
    plan = small_plan(shard_size=70)
    assert [t.shard for t in plan.shards] == list(range(len(plan.shards)))
    for cell in plan.cells:
        ranges = sorted((t.start, t.stop) for t in plan.shards if t.cell == cell.cell)
        covered = [i for start, stop in ranges for i in range(start, stop)]
        assert covered == list(range(cell.games))
        assert all(stop - start <= 70 for start, stop in ranges)


def test_pairs_share_a_pair_id_and_nothing_else_does() -> None:
    """Paired line-ups get one pair id (its first cell's number); unpaired cells their own."""
    plan = small_plan()
    mix, ev, evc = plan.cells
    assert mix.pair == mix.cell
    assert ev.pair == evc.pair == ev.cell != mix.pair


def test_pairs_group_by_field_size() -> None:
    """One pair label used at two field sizes makes two groups, one per size."""
    spec = parse_spec(
        'name = "p"\nseed = 3\ngames = 4\n'
        '[[lineups]]\nseats = ["ev", "ev"]\npair = "a"\n'
        '[[lineups]]\nseats = ["evc", "ev"]\npair = "a"\n'
        '[[lineups]]\nseats = ["ev", "ev", "ev"]\npair = "a"\n'
        '[[lineups]]\nseats = ["evc", "ev", "ev"]\npair = "a"\n'
    )
    pairs = [c.pair for c in make_plan(spec).cells]
    assert pairs == [0, 0, 2, 2]


def test_scale_changes_games_and_the_default_run_name() -> None:
    """--scale multiplies games per cell (at least 1) and names the run NAME-xF."""
    plan = small_plan()
    spec = plan.spec
    half = make_plan(spec, scale=0.5)
    assert [c.games for c in half.cells] == [c.games // 2 for c in plan.cells]
    assert half.run == "t-x0.5"
    tiny = make_plan(spec, scale=1e-6, run="quick")
    assert [c.games for c in tiny.cells] == [1, 1, 1] and tiny.run == "quick"
    assert all(t.run == "quick" for t in tiny.shards)


def test_engine_choice_is_checked_before_anything_runs() -> None:
    """--engine kernel with a user's own policy is refused naming the cell; auto is accepted
    and every shard carries the engine asked for."""
    spec = parse_spec(
        'name = "u"\nseed = 3\ngames = 4\n'
        '[[lineups]]\nseats = ["ev", "ev"]\n'
        '[[lineups]]\nseats = ["tests.pipeline.helpers:Timid", "ev"]\n'
    )
    with pytest.raises(ValueError, match=r"cell 1 \(tests.pipeline.helpers:Timid,ev\)"):
        make_plan(spec, engine="kernel")
    with pytest.raises(ValueError, match="valid: auto, kernel, reference"):
        make_plan(spec, engine="fast")
    assert {t.engine for t in make_plan(spec).shards} == {"auto"}
    assert {t.engine for t in make_plan(spec, engine="reference").shards} == {"reference"}


RULESETS_SPEC = """
name = "r"
seed = 9
games = 30
shard_size = 20
rulesets = ["3.1", "immediate", "legacy(target=150)"]

[[lineups]]
name = "ev"
pair = "p"
mix = ["ev"]
players = [2, 3]

[[lineups]]
name = "evc"
pair = "p"
mix = ["evc"]
players = [2, 3]
"""


def test_cells_cross_line_ups_rulesets_and_field_sizes() -> None:
    """Cells run line-up, then ruleset, then field size; each shard plays its cell's ruleset;
    common random numbers pair line-ups only under the same ruleset (and field size)."""
    plan = make_plan(parse_spec(RULESETS_SPEC))
    rulesets = ("3.1", "immediate", "legacy(target=150)")
    assert [(c.label, c.ruleset, c.players) for c in plan.cells] == [
        (label, r, n) for label in ("ev", "evc") for r in rulesets for n in (2, 3)
    ]
    for t in plan.shards:
        assert t.ruleset == plan.cells[t.cell].ruleset
    first = {(c.ruleset, c.players): c.cell for c in plan.cells if c.label == "ev"}
    for c in plan.cells:
        assert c.pair == first[(c.ruleset, c.players)]
        assert c.to_json()["ruleset"] == c.ruleset


def test_every_ruleset_and_target_plays_in_the_compiled_kernel() -> None:
    """immediate, legacy and a target override are all kernel rules: `auto` picks the kernel
    for every cell (no silent fall-back to the reference engine), and `kernel` is accepted."""
    from pipeline.plan import cell_engines

    spec = parse_spec(
        RULESETS_SPEC.replace('"legacy(target=150)"', '"legacy(target=150)", "3.1(target=250)"')
    )
    for engine in ("auto", "kernel"):
        plan = make_plan(spec, engine=engine)
        engines = cell_engines(plan)
        assert {r.split("(")[0] for r in spec.rulesets} == {"3.1", "immediate", "legacy"}
        assert set(engines.values()) == {("kernel", None)}, engines


def test_the_manifest_treats_the_ruleset_as_part_of_the_cell() -> None:
    """The manifest lists the run's rulesets (`ruleset` only when there is one); resuming with
    a cell's ruleset changed is a different plan naming that cell; a manifest written before
    cells named their ruleset still matches its own plan."""
    from pipeline.run import new_manifest, plan_mismatch

    plan = make_plan(parse_spec(RULESETS_SPEC))
    manifest = new_manifest(plan)
    assert manifest["rulesets"] == ["3.1", "immediate", "legacy(target=150)"]
    assert manifest["ruleset"] is None
    assert plan_mismatch(manifest, plan) is None
    other = make_plan(parse_spec(RULESETS_SPEC.replace('"immediate"', '"legacy"')))
    problem = plan_mismatch(manifest, other)
    assert problem is not None and problem.startswith("cells[2]: run has")

    one = make_plan(parse_spec(RULESETS_SPEC.replace("rulesets = [", 'ruleset = "legacy"\n#')))
    old = new_manifest(one)
    assert (old["ruleset"], old["rulesets"]) == ("legacy", ["legacy"])
    for c in old["cells"]:
        del c["ruleset"]
    assert plan_mismatch(old, one) is None
    assert plan_mismatch(old, make_plan(parse_spec(RULESETS_SPEC))) is not None
