-- Dealer-position effects per run and field size: points per round (with standard error), bust
-- and Flip 7 rates (Wilson) by turn position in the round (0 acts first after the dealer,
-- players - 1 is the dealer), all policies pooled (policy = '*') and per policy.
with rounds as (
    select * from fct_round_results
),

sums as (
    select
        run,
        players,
        position,
        coalesce(policy, '*') as policy,
        count(*) as rounds,
        sum(score) as points,
        sum(cast(score as bigint) * score) as points_sq,
        count(*) filter (busted) as busts,
        count(*) filter (flip7) as flip7s
    from rounds
    group by grouping sets ((run, players, position), (run, players, position, policy))
),

final as (
    select
        run,
        players,
        position,
        policy,
        rounds,
        points / rounds as points_per_round,
        mean_se(rounds, points, points_sq) as points_per_round_se,
        busts,
        busts / rounds as bust_rate,
        wilson_lo(busts, rounds) as bust_rate_lo,
        wilson_hi(busts, rounds) as bust_rate_hi,
        flip7s,
        flip7s / rounds as flip7_rate,
        wilson_lo(flip7s, rounds) as flip7_rate_lo,
        wilson_hi(flip7s, rounds) as flip7_rate_hi
    from sums
)

select * from final
