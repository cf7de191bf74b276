-- The shards' rollups added up per cell: for every cell (run, variant, ruleset, field size,
-- line-up) and group (grouping, figure, policy, opponent, key), the six sums of the statistics
-- contract over the cell's games. Every headline mart reads this: a few rows per shard summed
-- once, whatever the number of games (pipeline/rollups.py states the groupings).
with cells as (
    select columns(lambda c: is_cell_column(c)) from int_cells
),

sums as (
    select * from int_cell_sums
),

final as (
    select
        c.*,
        s.* exclude (run, cell, players, variant, ruleset, first_seating)
    from sums as s
    inner join cells as c on s.run = c.run and s.cell = c.cell
)

select * from final
