-- One row per engine event of a committed shard (see flip7/events.py for what player, card,
-- target and value mean per kind). The file list holds only shards whose games file exists.
with source as (
    select *
    from read_parquet(
        events_files(),
        hive_partitioning = true,
        hive_types = {'run': 'VARCHAR', 'players': 'INTEGER'}
    )
),

final as (
    select
        cast(run as varchar) as run,
        cast(players as integer) as players,
        shard,
        game,
        round,
        seq,
        kind,
        player,
        card,
        target,
        value
    from source
)

select * from final
