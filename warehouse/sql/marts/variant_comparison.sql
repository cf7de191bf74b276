-- How the variant changes the game: per cell without its run (variant, ruleset, field size,
-- line-up) and policy, pooled over every run that played that cell (the same line-up at the
-- same table under the same rules: replications, not a blend), the points per round, the bust
-- and Flip 7 rates and the win index (win rate x n), each with its 95% interval clustered by
-- game (the win index's not clipped) and its sample size. Line-ups named alike in a classic
-- and a "With a Vengeance" run compare row for row.
with policy_games as (
    select * from fct_policy_games
),

policy_rounds as (
    select * from fct_policy_game_rounds
),

-- Each source summed on its own (a join of the two per-game relations would be as big as the
-- games table); the two small results join on the cell and policy.
games_pooled as (
    select
        variant,
        ruleset,
        players,
        lineup,
        policy,
        count(distinct run) as runs,
        count(*) as games,
        cast(sum(seats) as bigint) as player_games,
        cast(sum(wins) as bigint) as wins,
        clustered_index(wins, seats, players) as win_index,
        clustered_index_lo(wins, seats, players) as win_index_lo,
        clustered_index_hi(wins, seats, players) as win_index_hi,
        cast(sum(rounds) as bigint) as rounds,
        cast(sum(points) as bigint) as points,
        clustered_lo(points, rounds) as ppr_lo,
        clustered_hi(points, rounds) as ppr_hi
    from policy_games
    group by variant, ruleset, players, lineup, policy
),

rounds_pooled as (
    select
        variant,
        ruleset,
        players,
        lineup,
        policy,
        cast(sum(busts) as bigint) as busts,
        clustered_rate_lo(busts, rounds) as bust_rate_lo,
        clustered_rate_hi(busts, rounds) as bust_rate_hi,
        cast(sum(flip7s) as bigint) as flip7s,
        clustered_rate_lo(flip7s, rounds) as flip7_rate_lo,
        clustered_rate_hi(flip7s, rounds) as flip7_rate_hi
    from policy_rounds
    group by variant, ruleset, players, lineup, policy
),

pooled as (
    select
        g.*,
        r.* exclude (variant, ruleset, players, lineup, policy)
    from games_pooled as g
    inner join rounds_pooled as r
        on
            g.variant = r.variant
            and g.ruleset = r.ruleset
            and g.players = r.players
            and g.lineup = r.lineup
            and g.policy = r.policy
),

final as (
    select
        variant,
        ruleset,
        players,
        lineup,
        policy,
        runs,
        games,
        player_games,
        wins,
        win_index,
        win_index_lo,
        win_index_hi,
        rounds,
        points / rounds as points_per_round,
        ppr_lo,
        ppr_hi,
        busts / rounds as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7s / rounds as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi
    from pooled
)

select * from final
