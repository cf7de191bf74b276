-- One row per tournament cell (field size x line-up) as the run's manifest plans it.
with manifests as (
    select * from stg_manifests
),

final as (
    select
        run,
        c.cell as cell,
        c.players as players,
        array_to_string(c.lineup, ',') as lineup,
        c.pair as pair,
        c.games as games,
        c.game_offset as game_offset
    from manifests, unnest(cells) as u(c)
)

select * from final
