-- scope: lake
-- A run is played under one ruleset and variant, the ones its manifest names (the marts key on
-- run and take ruleset and variant from the runs mart).
with played as (
    select
        run,
        list(distinct ruleset order by ruleset) as rulesets,
        list(distinct variant order by variant) as variants
    from stg_games
    group by run
),

manifests as (
    select * from stg_manifests
),

checked as (
    select
        p.run,
        case
            when len(p.rulesets) <> 1 or len(p.variants) <> 1
                then format('rulesets {} and variants {} in one run', p.rulesets, p.variants)
            when m.run is not null and (m.ruleset <> p.rulesets[1] or m.variant <> p.variants[1])
                then format('manifest says ruleset {} variant {}, the games {} {}', m.ruleset, m.variant, p.rulesets[1], p.variants[1])
        end as problem
    from played as p
    left join manifests as m on p.run = m.run
)

select * from checked where problem is not null
