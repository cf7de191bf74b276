-- Win rate per cell (run, variant, ruleset, field size, line-up) and policy: wins / seats the
-- policy filled, with its 95% interval clustered by game (y = the policy's wins in a game,
-- n = its seats there; clipped to [0, 1]), and the field-size adjusted win index: wins /
-- expected wins, where a seat at an n-player table expects 1/n (1.0 = an average seat), with
-- its own interval, not clipped (the `cluster_index_*` macros, as in league). `games`: games
-- the policy sat in (the clusters); `player_games`: seats played (a policy in two seats of one
-- game counts twice). Also the mean finishing rank (1 = winner). From the shards' rollups.
with figures as (
    select * from int_cell_figures
    where grouping = 'policy' and win_n is not null and rank_y is not null
),

final as (
    select
        columns(lambda c: is_cell_key(c)),
        policy,
        win_games as games,
        win_n as player_games,
        win_y as wins,
        win_y / win_n as win_rate,
        win_rate_lo,
        win_rate_hi,
        1.0 / players as expected_rate,
        win_n / players as expected_wins,
        win_y / (win_n / players) as win_index,
        win_index_lo,
        win_index_hi,
        rank_y / win_n as mean_rank
    from figures
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
