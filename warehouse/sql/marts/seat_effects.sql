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
        columns(lambda c: is_cell_key(c)),
        key as seat,
        policy,
        win_games as player_games,
        win_y as wins,
        win_y / win_n as win_rate,
        win_rate_lo,
        win_rate_hi,
        win_y / (win_n / players) as win_index,
        win_index_lo,
        win_index_hi,
        points_n as rounds,
        points_y / points_n as points_per_round,
        points_ratio_lo as points_per_round_lo,
        points_ratio_hi as points_per_round_hi
    from figures
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
