-- One row per tournament cell (line-up x ruleset x field size) as the run's manifest plans it.
-- `label` names the cell's line-up as the tournament summary does: the spec's [[lineups]] name,
-- else its policies joined by commas (a line-up over several field sizes or rulesets has one
-- label). `ruleset`: the cell's own, or the run's for a manifest whose cells do not name one.
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
        c.game_offset as game_offset,
        coalesce(c.ruleset, ruleset) as ruleset
    from manifests, unnest(cells) as u(c)
)

select * from final
