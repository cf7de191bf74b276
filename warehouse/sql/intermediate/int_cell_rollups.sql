-- The shards' rollups added up per cell: for every cell (run, variant, ruleset, field size,
-- line-up) and group (grouping, figure, policy, opponent, key), the six sums of the statistics
-- contract over the cell's games. Every headline mart reads this: a few rows per shard summed
-- once, whatever the number of games (pipeline/rollups.py states the groupings).
with sums as (
    select * from int_cell_sums
),

cells as (
    select * from int_cells
),

final as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        c.cell,
        s.grouping,
        s.figure,
        s.policy,
        s.opponent,
        s.key,
        s.games,
        s.y,
        s.n,
        s.yy,
        s.nn,
        s.yn
    from sums as s
    inner join cells as c on s.run = c.run and s.cell = c.cell
)

select * from final
