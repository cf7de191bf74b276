"""The plan: a spec expanded into cells (line-up x ruleset x field size) and cells cut into shards.

Cells are numbered in spec order (line-ups, then their rulesets, then their field sizes). Game
ids are unique within a run: cell game_offset + index in the cell. A cell's `pair` is the cell
number of the first cell of its common-random-number group (line-ups sharing a pair label at one
field size under one ruleset; its own number when unpaired), so game i of every cell in a group
gets the same seed, `derive_seed(root_seed, pair, i)`. Shards are contiguous game ranges of
one cell, numbered in cell order; the rows a game produces never depend on how it is sharded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from flip7.cards import Deck
from flip7.variants import Variant, parse_variant
from pipeline.lake import check_run_name
from pipeline.shard import ShardTask
from pipeline.spec import MAX_GAMES, Spec


@dataclass(frozen=True)
class Cell:
    """One line-up at one field size under one ruleset, as the manifest records it."""

    cell: int
    players: int
    lineup: tuple[str, ...]
    pair: int
    games: int
    game_offset: int
    label: str = ""
    ruleset: str = "3.1"

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "players": self.players,
            "lineup": list(self.lineup),
            "pair": self.pair,
            "games": self.games,
            "game_offset": self.game_offset,
            "label": self.label,
            "ruleset": self.ruleset,
        }


@dataclass(frozen=True)
class Plan:
    """Everything a run will do; `shards[i].shard == i`."""

    run: str
    spec: Spec
    scale: float
    cells: tuple[Cell, ...]
    shards: tuple[ShardTask, ...]
    engine: str = "auto"

    @property
    def games(self) -> int:
        return sum(c.games for c in self.cells)


def scaled_games(games: int, scale: float) -> int:
    """Games per cell under --scale (at least one game)."""
    return max(1, round(games * scale))


def default_run_name(spec: Spec, scale: float = 1.0) -> str:
    """The spec's name, with `-x<scale>` when scaled, so a quick look never clobbers the real run."""
    # 1e+06 would hold a '+', which no run name may: 1e06.
    return spec.name if scale == 1.0 else f"{spec.name}-x{scale:g}".replace("e+", "e")


def make_plan(
    spec: Spec, *, run: str | None = None, scale: float = 1.0, engine: str = "auto"
) -> Plan:
    """Expand the spec into cells and shards (pure; no I/O). `engine` is checked against every
    cell: asking for the compiled kernel where it cannot play is a ValueError, before Ray."""
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"--scale must be a finite number > 0, got {scale}")
    for i, lu in enumerate(spec.lineups):  # the bound first: it says what --scale may be
        if lu.games * scale >= MAX_GAMES + 0.5:
            raise ValueError(
                f"--scale {scale:g}: lineups[{i}] would play {lu.games:,} x {scale:g} games per "
                f"cell, more than {MAX_GAMES:,} (the lake's int32 cell_game); use --scale at "
                f"most {MAX_GAMES // lu.games}"
            )
    if run is not None:
        check_run_name(run, "--run")
    else:
        check_run_name(default_run_name(spec, scale), "run name (the spec's name and --scale)")
    run = run or default_run_name(spec, scale)
    cells: list[Cell] = []
    pair_of: dict[tuple[str, int, str], int] = {}
    offset = 0
    for lu in spec.lineups:
        games = scaled_games(lu.games, scale)  # at most MAX_GAMES (checked above)
        for ruleset in lu.rulesets:
            for layout in lu.layouts:
                n = len(layout)
                number = len(cells)
                pair = number
                if lu.pair is not None:
                    pair = pair_of.setdefault((lu.pair, n, ruleset), number)
                cells.append(Cell(number, n, layout, pair, games, offset, lu.label, ruleset))
                offset += games
    for c in cells:
        check_engine(engine, c, spec)
    # A sequential run lists its shards wave by wave (the k-th shard of every cell, then the
    # next), so that the driver, submitting in plan order, completes its waves in turn.
    starts = [(start, c) for c in cells for start in range(0, c.games, spec.shard_size)]
    if spec.stop.sequential:
        starts.sort(key=lambda sc: sc[0])  # stable: cells in order within a wave
    shards: list[ShardTask] = []
    for start, c in starts:
        shards.append(
            ShardTask(
                run=run,
                shard=len(shards),
                cell=c.cell,
                pair=c.pair,
                lineup=c.lineup,
                ruleset=c.ruleset,
                variant=spec.variant,
                root_seed=spec.seed,
                rotate=spec.rotate,
                game_offset=c.game_offset,
                start=start,
                stop=min(start + spec.shard_size, c.games),
                engine=engine,
                deck=spec.deck,
                compare=spec.stop.compare,
                ahead=spec.stop.test == "ranking",
            )
        )
    return Plan(run, spec, scale, tuple(cells), tuple(shards), engine)


def cell_engines(plan: Plan) -> dict[int, tuple[str, str | None]]:
    """Per cell: the engine its shards will use and, when not the kernel, why."""
    from flip7.kernel import choose_engine
    from flip7.policies import parse_policies
    from flip7.rules import parse_ruleset

    variant = spec_variant(plan.spec)
    out: dict[int, tuple[str, str | None]] = {}
    for c in plan.cells:
        out[c.cell] = choose_engine(
            plan.engine, parse_policies(list(c.lineup)), parse_ruleset(c.ruleset), variant
        )
    return out


def spec_variant(spec: Spec) -> Variant:
    """The spec's variant, with its declared deck when the variant says `deck=custom`."""
    return parse_variant(spec.variant, Deck("custom", spec.deck) if spec.deck else None)


def check_engine(engine: str, cell: Cell, spec: Spec) -> None:
    """ValueError unless `engine` can play the cell (flip7.kernel.choose_engine decides)."""
    from flip7.kernel import ENGINES, choose_engine
    from flip7.policies import parse_policies
    from flip7.rules import parse_ruleset

    if engine not in ENGINES:
        raise ValueError(f"--engine: unknown engine {engine!r}; valid: {', '.join(ENGINES)}")
    if engine != "kernel":
        return
    try:
        choose_engine(
            engine,
            parse_policies(list(cell.lineup)),
            parse_ruleset(cell.ruleset),
            spec_variant(spec),
        )
    except ValueError as exc:
        raise ValueError(
            f"cell {cell.cell} ({','.join(cell.lineup)}) under ruleset {cell.ruleset}: {exc}"
        ) from None
