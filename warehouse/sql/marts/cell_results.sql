-- (Read by the report and the rule-choices page of one run at a time.)
-- How each cell's games went, all seats pooled: per cell (run, variant, ruleset, field size,
-- line-up) the games, rounds per game, points per round, and bust and Flip 7 rates per round
-- played, each with its 95% interval clustered by game: rounds per game y = the game's rounds,
-- n = 1; points per round y = the points of all seats, n = seats x rounds; rates y = the game's
-- busts (Flip 7s) over all seats, n = its seat-rounds (clipped to [0, 1]). The same line-up
-- under several rulesets is how a run shows what a rule choice changes. From the shards'
-- rollups (grouping 'cell').
with rollups as (
    select * from int_cell_rollups
    where grouping = 'cell'
),

sums as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        any_value(games) filter (figure = 'rounds') as games,
        any_value(y) filter (figure = 'rounds') as rounds,
        any_value(cluster_ratio_lo(games, y, n, yy, nn, yn)) filter (figure = 'rounds')
            as rounds_per_game_lo,
        any_value(cluster_ratio_hi(games, y, n, yy, nn, yn)) filter (figure = 'rounds')
            as rounds_per_game_hi,
        any_value(n) filter (figure = 'points') as seat_rounds,
        any_value(y) filter (figure = 'points') as points,
        any_value(cluster_ratio_lo(games, y, n, yy, nn, yn)) filter (figure = 'points')
            as points_per_round_lo,
        any_value(cluster_ratio_hi(games, y, n, yy, nn, yn)) filter (figure = 'points')
            as points_per_round_hi,
        any_value(y) filter (figure = 'bust') as busts,
        any_value(cluster_rate_lo(games, y, n, yy, nn, yn)) filter (figure = 'bust')
            as bust_rate_lo,
        any_value(cluster_rate_hi(games, y, n, yy, nn, yn)) filter (figure = 'bust')
            as bust_rate_hi,
        any_value(y) filter (figure = 'flip7') as flip7s,
        any_value(cluster_rate_lo(games, y, n, yy, nn, yn)) filter (figure = 'flip7')
            as flip7_rate_lo,
        any_value(cluster_rate_hi(games, y, n, yy, nn, yn)) filter (figure = 'flip7')
            as flip7_rate_hi
    from rollups
    group by run, variant, ruleset, players, lineup, cell
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        games,
        rounds,
        rounds / games as rounds_per_game,
        rounds_per_game_lo,
        rounds_per_game_hi,
        seat_rounds,
        points,
        points / seat_rounds as points_per_round,
        points_per_round_lo,
        points_per_round_hi,
        busts,
        busts / seat_rounds as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7s,
        flip7s / seat_rounds as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi
    from sums
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
