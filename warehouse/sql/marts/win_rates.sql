-- Win rate per cell (run, variant, ruleset, field size, line-up) and policy: wins / seats the
-- policy filled, with its 95% interval clustered by game (y = the policy's wins in a game,
-- n = its seats there; clipped to [0, 1]), and the field-size adjusted win index: wins /
-- expected wins, where a seat at an n-player table expects 1/n (1.0 = an average seat), with
-- its own interval, not clipped (the `clustered_index_*` macros, as in league). `games`: games the policy sat in (the clusters);
-- `player_games`: seats played (a policy in two seats of one game counts twice). Also the
-- mean finishing rank (1 = winner).
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
        cast(sum(wins) as bigint) as wins,
        clustered_rate_lo(wins, seats) as win_rate_lo,
        clustered_rate_hi(wins, seats) as win_rate_hi,
        clustered_index(wins, seats, players) as win_index,
        clustered_index_lo(wins, seats, players) as win_index_lo,
        clustered_index_hi(wins, seats, players) as win_index_hi,
        cast(sum(rank_sum) as bigint) as rank_sum
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
        wins,
        wins / player_games as win_rate,
        win_rate_lo,
        win_rate_hi,
        1.0 / players as expected_rate,
        player_games / players as expected_wins,
        win_index,
        win_index_lo,
        win_index_hi,
        rank_sum / player_games as mean_rank
    from sums
)

select * from final
