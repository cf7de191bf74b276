-- stg_rollups without the per-game lists (game_y, game_n): one row per group and figure of a
-- committed shard with its six sums, what int_cell_sums adds up in its one pass over the
-- rollups (a read-only warehouse streams these rows file by file: warehouse/rollups.py).
with source as (
    select * from rollup_rows(rollups_files())
),

final as (
    select
        run,
        players,
        shard,
        cell,
        cast(variant as varchar) as variant,
        cast(ruleset as varchar) as ruleset,
        cast(seating as varchar) as seating,
        first_game,
        cast(grouping as varchar) as grouping,
        cast(figure as varchar) as figure,
        cast(policy as varchar) as policy,
        cast(opponent as varchar) as opponent,
        cast(key as integer) as key,
        games,
        y,
        n,
        yy,
        nn,
        yn
    from source
)

select * from final
