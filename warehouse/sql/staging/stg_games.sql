-- One row per player per game of a committed shard: the result, the line-up and the seed.
with source as (
    select * from lake_table(games_files())
),

final as (
    -- the columns of pipeline/schema.py's GAMES, after run, players and shard (lake_table)
    select * replace (
        cast(policy as varchar) as policy,
        cast(lineup as varchar) as lineup,
        cast(ruleset as varchar) as ruleset,
        cast(variant as varchar) as variant
    )
    from source
)

select * from final
