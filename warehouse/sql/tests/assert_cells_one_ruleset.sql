-- scope: lake
-- Each cell of a run is played under one ruleset, the one its manifest names for that cell (the
-- run's, for a manifest whose cells do not name one), and a run under one variant, its
-- manifest's: the marts take a cell's ruleset and variant from its games (int_cells).
with played as (
    select
        run,
        cell,
        list(distinct ruleset order by ruleset) as rulesets,
        list(distinct variant order by variant) as variants
    from stg_games
    group by run, cell
),

run_variants as (
    select run, list(distinct v order by v) as variants
    from (select run, unnest(variants) as v from played)
    group by run
),

manifests as (
    select * from stg_manifests
),

manifest_cells as (
    select * from stg_manifest_cells
),

checked as (
    select
        p.run,
        p.cell,
        case
            when len(p.rulesets) <> 1
                then format('cell {} plays rulesets {}, not one', p.cell, p.rulesets)
            when c.ruleset is not null and c.ruleset <> p.rulesets[1]
                then format('cell {}: the manifest says ruleset {}, the games {}', p.cell, c.ruleset, p.rulesets[1])
            when len(p.variants) <> 1
                then format('cell {} plays variants {}, not one', p.cell, p.variants)
            when m.run is not null and m.variant <> p.variants[1]
                then format('cell {}: the manifest says variant {}, the games {}', p.cell, m.variant, p.variants[1])
        end as problem
    from played as p
    left join manifest_cells as c on p.run = c.run and p.cell = c.cell
    left join manifests as m on p.run = m.run
)

select run, problem from checked where problem is not null
union all
select run, format('variants {} in one run', variants)
from run_variants
where len(variants) <> 1
