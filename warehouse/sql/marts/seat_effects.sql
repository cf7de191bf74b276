-- Seat effects per cell (run, variant, ruleset, field size, line-up): win rate, win index
-- (win rate x n) and points per round by seat, all policies pooled (policy = '*') and per
-- policy. Seat 0 deals round 1 (first_dealer), so seat 1 acts first in it; with rotated seats
-- each policy sits everywhere. A seat appears once per game, so each game is one cluster with
-- n = 1 seat for the win rate (y = 1 if that seat won) and n = the game's rounds for points
-- per round (y = that seat's total); 95% intervals clustered by game (the win index's not
-- clipped: the `cluster_index_*` macros). From the shards' rollups (grouping 'seat').
with rollups as (
    select * from int_cell_rollups
    where grouping = 'seat'
),

wins as (
    select * from rollups where figure = 'win'
),

points as (
    select * from rollups where figure = 'points'
),

final as (
    select
        w.run,
        w.variant,
        w.ruleset,
        w.players,
        w.lineup,
        w.key as seat,
        w.policy,
        w.games as player_games,
        w.y as wins,
        w.y / w.n as win_rate,
        cluster_rate_lo(w.games, w.y, w.n, w.yy, w.nn, w.yn) as win_rate_lo,
        cluster_rate_hi(w.games, w.y, w.n, w.yy, w.nn, w.yn) as win_rate_hi,
        w.y / (w.n / w.players) as win_index,
        cluster_index_lo(
            w.games, w.y, w.n, w.n / w.players, w.yy,
            w.nn / (w.players * w.players), w.yn / w.players
        ) as win_index_lo,
        cluster_index_hi(
            w.games, w.y, w.n, w.n / w.players, w.yy,
            w.nn / (w.players * w.players), w.yn / w.players
        ) as win_index_hi,
        p.n as rounds,
        p.y / p.n as points_per_round,
        cluster_ratio_lo(p.games, p.y, p.n, p.yy, p.nn, p.yn) as points_per_round_lo,
        cluster_ratio_hi(p.games, p.y, p.n, p.yy, p.nn, p.yn) as points_per_round_hi
    from wins as w
    inner join points as p
        on w.run = p.run and w.cell = p.cell and w.key = p.key and w.policy = p.policy
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
