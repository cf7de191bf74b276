-- One row per finished shard as the run's manifest records it, with its row counts.
with manifests as (
    select * from stg_manifests
),

final as (
    select
        run,
        cast(e.key as integer) as shard,
        e.value.cell as cell,
        e.value.start as start,
        e.value.stop as stop,
        e.value.games as games,
        e.value."rows".events as events_rows,
        e.value."rows".rounds as rounds_rows,
        e.value."rows".rollups as rollups_rows,
        e.value."rows".games as games_rows,
        e.value.seconds as seconds
    from manifests, unnest(map_entries(shards)) as u(e)
)

select * from final
