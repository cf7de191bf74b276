-- Points per round per run, field size and policy: mean, standard deviation and standard error
-- of the round score (rounds taken as independent, as `flip7 sim` does), with a 95% interval.
with rounds as (
    select * from fct_round_results
),

sums as (
    select
        run,
        players,
        policy,
        count(*) filter (round = 1) as player_games,
        count(*) as rounds,
        sum(score) as points,
        sum(cast(score as bigint) * score) as points_sq
    from rounds
    group by run, players, policy
),

final as (
    select
        run,
        players,
        policy,
        player_games,
        rounds,
        points,
        points_sq,
        points / rounds as points_per_round,
        sqrt(greatest((points_sq - points * points / rounds) / nullif(rounds - 1, 0), 0.0)) as sd,
        mean_se(rounds, points, points_sq) as se,
        points / rounds - 1.959963984540054 * mean_se(rounds, points, points_sq) as ppr_lo,
        points / rounds + 1.959963984540054 * mean_se(rounds, points, points_sq) as ppr_hi
    from sums
)

select * from final
