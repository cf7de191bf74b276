-- How rounds end per run, field size and policy: bust, Flip 7, stay and freeze rates per round
-- played, each with its count and 95% Wilson interval.
with rounds as (
    select * from fct_round_results
),

sums as (
    select
        run,
        players,
        policy,
        count(*) as rounds,
        count(*) filter (busted) as busts,
        count(*) filter (flip7) as flip7s,
        count(*) filter (status = 1) as stays,
        count(*) filter (status = 2) as freezes
    from rounds
    group by run, players, policy
),

final as (
    select
        run,
        players,
        policy,
        rounds,
        busts,
        busts / rounds as bust_rate,
        wilson_lo(busts, rounds) as bust_rate_lo,
        wilson_hi(busts, rounds) as bust_rate_hi,
        flip7s,
        flip7s / rounds as flip7_rate,
        wilson_lo(flip7s, rounds) as flip7_rate_lo,
        wilson_hi(flip7s, rounds) as flip7_rate_hi,
        stays,
        stays / rounds as stay_rate,
        wilson_lo(stays, rounds) as stay_rate_lo,
        wilson_hi(stays, rounds) as stay_rate_hi,
        freezes,
        freezes / rounds as freeze_rate,
        wilson_lo(freezes, rounds) as freeze_rate_lo,
        wilson_hi(freezes, rounds) as freeze_rate_hi
    from sums
)

select * from final
