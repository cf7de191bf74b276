-- One row per run with a sequential test (SPRT): what it compared, its hypotheses and error
-- rates, and where it stands: H1 or H0 accepted, inconclusive at the ceiling, or undecided
-- (still running), after how many games, with the estimate of A - B and its 95% interval at
-- that look. See docs/sequential.md.
with stops as (
    select * from stg_manifest_stops
),

final as (
    select
        run,
        policy_a,
        policy_b,
        metric,
        h0,
        h1,
        alpha,
        beta,
        planned_games as max_games,
        wave_games,
        coalesce(decision.result, 'undecided') as decision,
        len(waves) as looks,
        coalesce(decision.games, waves[-1].games, 0) as games,
        coalesce(decision.estimate, waves[-1].estimate) as estimate,
        coalesce(decision.estimate, waves[-1].estimate)
        - coalesce(decision.half_width, waves[-1].half_width) as estimate_lo,
        coalesce(decision.estimate, waves[-1].estimate)
        + coalesce(decision.half_width, waves[-1].half_width) as estimate_hi,
        coalesce(decision.llr, waves[-1].llr) as llr,
        lower_bound,
        upper_bound
    from stops
    where test = 'sprt'
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
