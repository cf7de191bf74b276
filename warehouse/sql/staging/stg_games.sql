-- One row per player per game of a committed shard: the result, the line-up and the seed.
with source as (
    select * from lake_table(games_files())
),

final as (
    select
        run,
        players,
        shard,
        game,
        seat,
        cast(policy as varchar) as policy,
        cell,
        cell_game,
        pair,
        cast(lineup as varchar) as lineup,
        cast(ruleset as varchar) as ruleset,
        cast(variant as varchar) as variant,
        seed,
        first_dealer,
        rounds,
        total,
        rank,
        winner,
        capped,
        events
    from source
)

select * from final
