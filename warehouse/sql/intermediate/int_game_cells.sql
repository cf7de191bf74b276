-- One row per game with the cell it belongs to. A cell is (run, variant, ruleset, field size,
-- line-up): every per-cell figure in the marts is keyed by these five columns. `lineup` is the
-- cell's label from the run's manifest (the spec's [[lineups]] name, else its policies joined
-- by commas, as the tournament summary names it); a run without a manifest says 'cell N'.
with games as (
    select run, players, shard, game, cell, cell_game, pair, ruleset, variant, rounds
    from stg_games
    where seat = 0
),

cells as (
    select run, cell, label from stg_manifest_cells
),

final as (
    select
        g.run,
        g.variant,
        g.ruleset,
        g.players,
        coalesce(c.label, format('cell {}', g.cell)) as lineup,
        g.cell,
        g.shard,
        g.game,
        g.cell_game,
        g.pair,
        g.rounds
    from games as g
    left join cells as c on g.run = c.run and g.cell = c.cell
)

select * from final
