-- How rounds end per cell (run, variant, ruleset, field size, line-up) and policy: bust,
-- Flip 7, stay and freeze rates per round played, each with its count and 95% interval
-- clustered by game (y = the game's busts, ... of the policy's seats, n = the rounds they
-- played in it; clipped to [0, 1]).
with policy_rounds as (
    select * from fct_policy_game_rounds
),

sums as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        policy,
        count(*) as games,
        cast(sum(rounds) as bigint) as rounds,
        cast(sum(busts) as bigint) as busts,
        clustered_rate_lo(busts, rounds) as bust_rate_lo,
        clustered_rate_hi(busts, rounds) as bust_rate_hi,
        cast(sum(flip7s) as bigint) as flip7s,
        clustered_rate_lo(flip7s, rounds) as flip7_rate_lo,
        clustered_rate_hi(flip7s, rounds) as flip7_rate_hi,
        cast(sum(stays) as bigint) as stays,
        clustered_rate_lo(stays, rounds) as stay_rate_lo,
        clustered_rate_hi(stays, rounds) as stay_rate_hi,
        cast(sum(freezes) as bigint) as freezes,
        clustered_rate_lo(freezes, rounds) as freeze_rate_lo,
        clustered_rate_hi(freezes, rounds) as freeze_rate_hi
    from policy_rounds
    group by run, variant, ruleset, players, lineup, policy
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        policy,
        games,
        rounds,
        busts,
        busts / rounds as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7s,
        flip7s / rounds as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi,
        stays,
        stays / rounds as stay_rate,
        stay_rate_lo,
        stay_rate_hi,
        freezes,
        freezes / rounds as freeze_rate,
        freeze_rate_lo,
        freeze_rate_hi
    from sums
)

select * from final
