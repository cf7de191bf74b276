-- One row per tournament cell (field size x line-up) as the run's manifest plans it. `label`
-- names the cell's line-up as the tournament summary does: the spec's [[lineups]] name, else
-- its policies joined by commas (a line-up over several field sizes has one label).
with manifests as (
    select * from stg_manifests
),

final as (
    select
        run,
        c.cell as cell,
        c.players as players,
        array_to_string(c.lineup, ',') as lineup,
        coalesce(nullif(c.label, ''), array_to_string(c.lineup, ',')) as label,
        c.pair as pair,
        c.games as games,
        c.game_offset as game_offset
    from manifests, unnest(cells) as u(c)
)

select * from final
