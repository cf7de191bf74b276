-- Seat effects per run and field size: win rate (Wilson), win index (win rate x n) and points
-- per round by seat, all policies pooled (policy = '*') and per policy. Seat 0 deals round 1
-- (first_dealer), so seat 1 acts first in it; with rotated seats each policy sits everywhere.
with results as (
    select * from fct_game_results
),

rounds as (
    select * from fct_round_results
),

wins as (
    select
        run,
        players,
        seat,
        coalesce(policy, '*') as policy,
        count(*) as player_games,
        count(*) filter (winner) as wins
    from results
    group by grouping sets ((run, players, seat), (run, players, seat, policy))
),

points as (
    select
        run,
        players,
        seat,
        coalesce(policy, '*') as policy,
        count(*) as rounds,
        sum(score) as points,
        sum(cast(score as bigint) * score) as points_sq
    from rounds
    group by grouping sets ((run, players, seat), (run, players, seat, policy))
),

final as (
    select
        w.run,
        w.players,
        cast(w.seat as integer) as seat,
        w.policy,
        w.player_games,
        w.wins,
        w.wins / w.player_games as win_rate,
        wilson_lo(w.wins, w.player_games) as win_rate_lo,
        wilson_hi(w.wins, w.player_games) as win_rate_hi,
        w.wins * w.players / w.player_games as win_index,
        p.rounds,
        p.points / p.rounds as points_per_round,
        mean_se(p.rounds, p.points, p.points_sq) as points_per_round_se
    from wins as w
    left join points as p
        on w.run = p.run and w.players = p.players and w.seat = p.seat and w.policy = p.policy
)

select * from final
