-- Seat effects per cell (run, variant, ruleset, field size, line-up): win rate, win index
-- (win rate x n) and points per round by seat, all policies pooled (policy = '*') and per
-- policy. Seat 0 deals round 1 (first_dealer), so seat 1 acts first in it; with rotated seats
-- each policy sits everywhere. A seat appears once per game, so each game is one cluster with
-- n = 1 seat for the win rate (y = 1 if that seat won) and n = the game's rounds for points
-- per round (y = that seat's total); 95% intervals clustered by game (the win index's not
-- clipped: the `cluster_index_*` macros). From the shards' rollups (grouping 'seat').
with figures as (
    select * from int_cell_figures
    where grouping = 'seat' and win_n is not null and points_n is not null
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        key as seat,
        policy,
        win_games as player_games,
        win_y as wins,
        win_y / win_n as win_rate,
        cluster_rate_lo(win_games, win_y, win_n, win_yy, win_nn, win_yn) as win_rate_lo,
        cluster_rate_hi(win_games, win_y, win_n, win_yy, win_nn, win_yn) as win_rate_hi,
        win_y / (win_n / players) as win_index,
        cluster_index_lo(
            win_games, win_y, win_n, win_n / players, win_yy,
            win_nn / (players * players), win_yn / players
        ) as win_index_lo,
        cluster_index_hi(
            win_games, win_y, win_n, win_n / players, win_yy,
            win_nn / (players * players), win_yn / players
        ) as win_index_hi,
        points_n as rounds,
        points_y / points_n as points_per_round,
        cluster_ratio_lo(points_games, points_y, points_n, points_yy, points_nn, points_yn)
            as points_per_round_lo,
        cluster_ratio_hi(points_games, points_y, points_n, points_yy, points_nn, points_yn)
            as points_per_round_hi
    from figures
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
