-- One row per look of a run's sequential test (SPRT), in order: the games so far, the estimate
-- of A - B with its 95% interval, the log-likelihood ratio between its bounds, and the decision
-- at the look that took it. The test only looks at waves whose shards are all recorded, in plan
-- order, so these rows are the same on any number of workers. See docs/sequential.md.
with stops as (
    select * from stg_manifest_stops
),

looks as (
    select
        s.run,
        s.policy_a,
        s.policy_b,
        s.metric,
        s.lower_bound,
        s.upper_bound,
        s.decision,
        unnest(s.waves) as w
    from stops as s
    where s.test = 'sprt'
),

final as (
    select
        run,
        w.wave as wave,
        w.games as games,
        policy_a,
        policy_b,
        metric,
        unnest(look_estimate(w)),
        lower_bound,
        upper_bound,
        case when decision.wave = w.wave then decision.result end as decision
    from looks
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
