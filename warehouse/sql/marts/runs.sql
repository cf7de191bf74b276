-- One row per run: what its manifest says (status, rulesets, seed, plan) beside what is
-- committed and readable now (shards, games, rows per table, field sizes, policies). A run
-- with shards but no manifest shows status 'no manifest'. `ruleset` is the run's one ruleset,
-- NULL when its cells play several; `rulesets` lists them (the manifest's, in cell order).
with manifests as (
    select * from stg_manifests
),

files as (
    select * from stg_parquet_files
),

rollups as (
    select * from int_cell_rollups
),

committed as (
    select
        run,
        count(*) filter (table_name = 'games') as shards,
        cast(sum(num_rows // players) filter (table_name = 'games') as bigint) as games,
        cast(sum(num_rows) filter (table_name = 'rounds') as bigint) as rounds
    from files
    group by run
),

-- What the committed shards played, from their rollups summed per cell: the events
-- files hold a row per game, so the games' logged events are counted there.
played as (
    select
        run,
        list(distinct ruleset order by ruleset) as rulesets,
        any_value(variant) as variant,
        list(distinct players order by players) as field_sizes,
        list(distinct policy order by policy) filter (grouping = 'policy') as policies,
        cast(sum(y) filter (grouping = 'cell' and figure = 'events') as bigint) as events
    from rollups
    group by run
),

-- The rulesets of the manifest's cells in cell order (a cell without one plays the run's).
manifest_rulesets as (
    select run, list(ruleset order by first_cell) as rulesets
    from (
        select run, ruleset, min(cell) as first_cell
        from stg_manifest_cells
        group by run, ruleset
    )
    group by run
),

final as (
    select
        coalesce(m.run, c.run) as run,
        coalesce(m.status, 'no manifest') as status,
        case
            when m.run is not null then m.ruleset
            when len(p.rulesets) = 1 then p.rulesets[1]
        end as ruleset,
        coalesce(mr.rulesets, p.rulesets) as rulesets,
        coalesce(m.variant, p.variant) as variant,
        m.seed,
        m.created,
        m.schema_version,
        m.package_version,
        m.rules_version,
        m.planned_shards,
        m.planned_games,
        coalesce(c.shards, 0) as shards,
        coalesce(c.games, 0) as games,
        coalesce(p.events, 0) as events,
        coalesce(c.rounds, 0) as rounds,
        p.field_sizes,
        p.policies,
        len(m.cells) as cells
    from manifests as m
    full outer join committed as c on m.run = c.run
    left join played as p on coalesce(m.run, c.run) = p.run
    left join manifest_rulesets as mr on m.run = mr.run
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
