-- One row per tournament cell that has games: (run, variant, ruleset, field size, line-up)
-- and the cell number the pipeline gave it. `lineup` is the cell's label from the run's
-- manifest (the spec's [[lineups]] name, else its policies joined by commas, as the tournament
-- summary names it); a run without a manifest says 'cell N'. Several cells of a run may share
-- a label (one named line-up over several field sizes: one cell per size).
with played as (
    select
        run,
        cell,
        any_value(players) as players,
        any_value(variant) as variant,
        any_value(ruleset) as ruleset
    from stg_games
    where seat = 0
    group by run, cell
),

labels as (
    select run, cell, label from stg_manifest_cells
),

final as (
    select
        p.run,
        p.variant,
        p.ruleset,
        p.players,
        coalesce(l.label, format('cell {}', p.cell)) as lineup,
        p.cell
    from played as p
    left join labels as l on p.run = l.run and p.cell = l.cell
)

select * from final
