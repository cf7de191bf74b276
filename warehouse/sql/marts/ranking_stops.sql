-- One row per adjacent pair of the ranking of a run that stops by its ranking ([stop] test =
-- "ranking"), at the deciding look (else the last one): the pair in ranking order, the share
-- of their decided meetings the higher-ranked finished ahead with its 95% interval, the
-- log-likelihood ratio between its bounds, and its verdict: separated, equivalent or open.
-- See docs/sequential.md ("A league: stop by the ranking").
with stops as (
    select * from stg_manifest_stops
    where test = 'ranking'
),

looks as (
    select
        run,
        alpha,
        beta,
        margin,
        lower_bound,
        upper_bound,
        coalesce(decision.result, 'undecided') as decision,
        coalesce(decision.games, waves[-1].games) as games,
        coalesce(decision.pairs, waves[-1].pairs) as seen_pairs
    from stops
    where decision is not null or len(waves) > 0
),

pairs as (
    select
        l.*,
        unnest(l.seen_pairs) as p,
        generate_subscripts(l.seen_pairs, 1) as place
    from looks as l
),

final as (
    select
        run,
        place,
        p.above as above,
        p.below as below,
        p.meetings as meetings,
        unnest(look_estimate(p)),
        lower_bound,
        upper_bound,
        coalesce(p.verdict, 'open') as verdict,
        decision,
        games,
        margin,
        alpha,
        beta
    from pairs
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
