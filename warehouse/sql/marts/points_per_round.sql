-- Points per round per cell (run, variant, ruleset, field size, line-up) and policy, pooled:
-- every point the policy's seats scored / every round they played, with its 95% interval
-- clustered by game (y = the points of the policy's seats in a game, n = the rounds they
-- played there; not clipped). `se` is that interval's standard error (half-width / 1.96).
with policy_games as (
    select * from fct_policy_games
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
        cast(sum(seats) as bigint) as player_games,
        cast(sum(rounds) as bigint) as rounds,
        cast(sum(points) as bigint) as points,
        clustered_half(points, rounds) as half,
        clustered_lo(points, rounds) as ppr_lo,
        clustered_hi(points, rounds) as ppr_hi
    from policy_games
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
        player_games,
        rounds,
        points,
        points / rounds as points_per_round,
        half / 1.959963984540054 as se,
        ppr_lo,
        ppr_hi
    from sums
)

select * from final
