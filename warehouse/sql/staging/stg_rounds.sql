-- One row per player per round of a committed shard (the compact table most marts read).
-- status at round end: 0 active (a Flip 7 ended the round), 1 stayed, 2 frozen, 3 busted.
with source as (
    select *
    from read_parquet(
        rounds_files(),
        hive_partitioning = true,
        hive_types = {'run': 'VARCHAR', 'players': 'INTEGER'},
        filename = true
    )
),

final as (
    select
        cast(run as varchar) as run,
        cast(players as integer) as players,
        shard_of(filename) as shard,
        game,
        round,
        seat,
        cast(policy as varchar) as policy,
        dealer,
        score,
        total,
        busted,
        flip7,
        status
    from source
)

select * from final
