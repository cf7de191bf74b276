-- A league table per run: every policy over all the field sizes it played, ranked by the
-- field-size adjusted win index (wins / expected wins, expecting 1/n at an n-player table), with
-- a 95% normal interval from the binomial variance of each field size, win rate (Wilson),
-- points per round, bust and Flip 7 rates (Wilson) and mean finishing rank.
with wins as (
    select * from win_rates
),

points as (
    select * from points_per_round
),

rates as (
    select * from round_rates
),

by_size as (
    select
        w.run,
        w.players,
        w.policy,
        w.player_games as n,
        w.wins,
        w.mean_rank * w.player_games as rank_sum,
        p.rounds,
        p.points,
        p.points_sq,
        r.busts,
        r.flip7s
    from wins as w
    inner join points as p on w.run = p.run and w.players = p.players and w.policy = p.policy
    inner join rates as r on w.run = r.run and w.players = r.players and w.policy = r.policy
),

pooled as (
    select
        run,
        policy,
        list(players order by players) as field_sizes,
        sum(n) as player_games,
        sum(wins) as wins,
        sum(n / players) as expected_wins,
        sum(n * (wins / n) * (1 - wins / n)) as wins_var,
        sum(rounds) as rounds,
        sum(points) as points,
        sum(points_sq) as points_sq,
        sum(busts) as busts,
        sum(flip7s) as flip7s,
        sum(rank_sum) as rank_sum
    from by_size
    group by run, policy
),

final as (
    select
        run,
        cast(row_number() over (partition by run order by wins / expected_wins desc, policy) as integer)
            as place,
        policy,
        field_sizes,
        player_games,
        wins,
        expected_wins,
        wins / expected_wins as win_index,
        sqrt(wins_var) / expected_wins as win_index_se,
        (wins - 1.959963984540054 * sqrt(wins_var)) / expected_wins as win_index_lo,
        (wins + 1.959963984540054 * sqrt(wins_var)) / expected_wins as win_index_hi,
        wins / player_games as win_rate,
        wilson_lo(wins, player_games) as win_rate_lo,
        wilson_hi(wins, player_games) as win_rate_hi,
        rounds,
        points / rounds as points_per_round,
        mean_se(rounds, points, points_sq) as points_per_round_se,
        busts / rounds as bust_rate,
        wilson_lo(busts, rounds) as bust_rate_lo,
        wilson_hi(busts, rounds) as bust_rate_hi,
        flip7s / rounds as flip7_rate,
        wilson_lo(flip7s, rounds) as flip7_rate_lo,
        wilson_hi(flip7s, rounds) as flip7_rate_hi,
        rank_sum / player_games as mean_rank
    from pooled
)

select * from final
