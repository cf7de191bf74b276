-- How the variant changes the game: per variant, field size and policy, pooled over every run of
-- that variant (classic vs "With a Vengeance" and its options), the points per round with its
-- 95% interval, the bust and Flip 7 rates (Wilson) and the field-size adjusted win index
-- (wins / expected wins) with its interval, each with its sample size.
with runs as (
    select run, variant from runs
),

wins as (
    select * from win_rates
),

points as (
    select * from points_per_round
),

rates as (
    select * from round_rates
),

pooled as (
    select
        r.variant,
        w.players,
        w.policy,
        count(distinct w.run) as runs,
        sum(w.player_games) as player_games,
        sum(w.wins) as wins,
        sum(p.rounds) as rounds,
        sum(p.points) as points,
        sum(p.points_sq) as points_sq,
        sum(x.busts) as busts,
        sum(x.flip7s) as flip7s
    from wins as w
    join runs as r on w.run = r.run
    join points as p on w.run = p.run and w.players = p.players and w.policy = p.policy
    join rates as x on w.run = x.run and w.players = x.players and w.policy = x.policy
    group by r.variant, w.players, w.policy
),

final as (
    select
        variant,
        players,
        policy,
        runs,
        player_games,
        wins,
        wins * players / player_games as win_index,
        wilson_lo(wins, player_games) * players as win_index_lo,
        wilson_hi(wins, player_games) * players as win_index_hi,
        rounds,
        points / rounds as points_per_round,
        points / rounds - 1.959963984540054 * mean_se(rounds, points, points_sq) as ppr_lo,
        points / rounds + 1.959963984540054 * mean_se(rounds, points, points_sq) as ppr_hi,
        busts / rounds as bust_rate,
        wilson_lo(busts, rounds) as bust_rate_lo,
        wilson_hi(busts, rounds) as bust_rate_hi,
        flip7s / rounds as flip7_rate,
        wilson_lo(flip7s, rounds) as flip7_rate_lo,
        wilson_hi(flip7s, rounds) as flip7_rate_hi
    from pooled
)

select * from final
