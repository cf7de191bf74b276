-- Win rate per run, field size and policy, with its 95% Wilson interval and the field-size
-- adjusted win index: wins / expected wins, where a seat at an n-player table expects 1/n
-- (1.0 = an average seat; intervals scale the same way). `player_games` counts seats played:
-- a policy in two seats of one game counts twice. Also the mean finishing rank (1 = winner).
with results as (
    select * from fct_game_results
),

counts as (
    select
        run,
        players,
        policy,
        count(*) as player_games,
        count(*) filter (winner) as wins,
        sum(rank) as rank_sum
    from results
    group by run, players, policy
),

final as (
    select
        run,
        players,
        policy,
        player_games,
        wins,
        wins / player_games as win_rate,
        wilson_lo(wins, player_games) as win_rate_lo,
        wilson_hi(wins, player_games) as win_rate_hi,
        1.0 / players as expected_rate,
        player_games / players as expected_wins,
        wins * players / player_games as win_index,
        wilson_lo(wins, player_games) * players as win_index_lo,
        wilson_hi(wins, player_games) * players as win_index_hi,
        rank_sum / player_games as mean_rank
    from counts
)

select * from final
