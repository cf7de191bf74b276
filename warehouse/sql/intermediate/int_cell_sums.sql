-- The shards' rollups added up per cell and group (grouping, figure, policy, opponent, key): the
-- six sums of the statistics contract over the cell's committed games, with what the cell is
-- (field size, variant, ruleset, and the seating of its first committed game). The one pass over
-- every shard's rollups file: a reader's connection keeps the result in memory (a few rows per
-- cell), and int_cells and int_cell_rollups read it.
with rollups as (
    select * from stg_rollup_rows
),

final as (
    select
        run,
        cell,
        grouping,
        figure,
        policy,
        opponent,
        key,
        any_value(players) as players,
        any_value(variant) as variant,
        any_value(ruleset) as ruleset,
        arg_min(seating, first_game) as first_seating,
        cast(sum(games) as bigint) as games,
        cast(sum(y) as bigint) as y,
        cast(sum(n) as bigint) as n,
        cast(sum(yy) as bigint) as yy,
        cast(sum(nn) as bigint) as nn,
        cast(sum(yn) as bigint) as yn
    from rollups
    group by run, cell, grouping, figure, policy, opponent, key
)

select * from final
