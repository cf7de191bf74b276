-- materialized: view
-- (No dashboard page reads it: computed when a query asks, not at every dashboard start.)
-- Seat effects per cell (run, variant, ruleset, field size, line-up): win rate, win index
-- (win rate x n) and points per round by seat, all policies pooled (policy = '*') and per
-- policy. Seat 0 deals round 1 (first_dealer), so seat 1 acts first in it; with rotated seats
-- each policy sits everywhere. A seat appears once per game, so each game is one cluster with
-- n = 1 seat for the win rate (y = 1 if that seat won) and n = the game's rounds for points
-- per round (y = that seat's total); 95% intervals clustered by game (the win index's not
-- clipped: the `clustered_index_*` macros).
with results as (
    select * from stg_games
),

cells as (
    select * from int_cells
),

seats as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        r.game,
        r.seat,
        r.policy,
        cast(r.winner as integer) as win,
        r.total as points,
        r.rounds
    from results as r
    inner join cells as c on r.run = c.run and r.cell = c.cell
),

sums as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        seat,
        coalesce(policy, '*') as policy,
        count(*) as player_games,
        cast(sum(win) as bigint) as wins,
        clustered_rate_lo(win, 1) as win_rate_lo,
        clustered_rate_hi(win, 1) as win_rate_hi,
        clustered_index(win, 1, players) as win_index,
        clustered_index_lo(win, 1, players) as win_index_lo,
        clustered_index_hi(win, 1, players) as win_index_hi,
        cast(sum(rounds) as bigint) as rounds,
        cast(sum(points) as bigint) as points,
        clustered_lo(points, rounds) as points_per_round_lo,
        clustered_hi(points, rounds) as points_per_round_hi
    from seats
    group by grouping sets (
        (run, variant, ruleset, players, lineup, seat),
        (run, variant, ruleset, players, lineup, seat, policy)
    )
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        cast(seat as integer) as seat,
        policy,
        player_games,
        wins,
        wins / player_games as win_rate,
        win_rate_lo,
        win_rate_hi,
        win_index,
        win_index_lo,
        win_index_hi,
        rounds,
        points / rounds as points_per_round,
        points_per_round_lo,
        points_per_round_hi
    from sums
)

select * from final
