-- One row per tournament cell that has games: (run, variant, ruleset, field size, line-up)
-- and the cell number the pipeline gave it. `lineup` is the cell's label from the run's
-- manifest (the spec's [[lineups]] name, else its policies joined by commas, as the tournament
-- summary names it); a run without a manifest says 'cell N'. Several cells of a run may share
-- a label (one named line-up over several field sizes: one cell per size). `seating` is what
-- the line-up is: its policies in seat order, joined by commas (the manifest's line-up, before
-- any rotation; without a manifest, the seats of the cell's first game in the lake), followed by
-- ' (fixed seats)' when the run's seats do not rotate: a policy then keeps its seat's advantage
-- or handicap in every game, so that line-up is another cell than the rotating one. Within a
-- run a label names one seating per field size and ruleset (the spec refuses two); across
-- runs two line-ups may share a label, so whatever matches or pools cells of several runs
-- keys on `seating` too.
-- The cells played are read from the shards' rollups summed per cell, not from the games.
with played as (
    select run, cell, players, variant, ruleset, first_seating
    from int_cell_sums
    where grouping = 'cell' and figure = 'rounds'
),

labels as (
    select
        c.run,
        c.cell,
        c.label,
        c.lineup || case when m.rotate = false then ' (fixed seats)' else '' end as seating
    from stg_manifest_cells as c
    inner join stg_manifests as m on c.run = m.run
),

final as (
    select
        p.run,
        p.variant,
        p.ruleset,
        p.players,
        coalesce(l.label, format('cell {}', p.cell)) as lineup,
        p.cell,
        coalesce(l.seating, p.first_seating) as seating
    from played as p
    left join labels as l on p.run = l.run and p.cell = l.cell
)

select * from final
