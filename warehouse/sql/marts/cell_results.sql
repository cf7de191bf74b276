-- (Read by the report and the rule-choices page of one run at a time.)
-- How each cell's games went, all seats pooled: per cell (run, variant, ruleset, field size,
-- line-up) the games, rounds per game, points per round, and bust and Flip 7 rates per round
-- played, each with its 95% interval clustered by game: rounds per game y = the game's rounds,
-- n = 1; points per round y = the points of all seats, n = seats x rounds; rates y = the game's
-- busts (Flip 7s) over all seats, n = its seat-rounds (clipped to [0, 1]). The same line-up
-- under several rulesets is how a run shows what a rule choice changes. From the shards'
-- rollups (grouping 'cell').
with figures as (
    select * from int_cell_figures
    where grouping = 'cell'
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        rounds_games as games,
        rounds_y as rounds,
        rounds_y / rounds_games as rounds_per_game,
        cluster_ratio_lo(rounds_games, rounds_y, rounds_n, rounds_yy, rounds_nn, rounds_yn)
            as rounds_per_game_lo,
        cluster_ratio_hi(rounds_games, rounds_y, rounds_n, rounds_yy, rounds_nn, rounds_yn)
            as rounds_per_game_hi,
        points_n as seat_rounds,
        points_y as points,
        points_y / points_n as points_per_round,
        cluster_ratio_lo(points_games, points_y, points_n, points_yy, points_nn, points_yn)
            as points_per_round_lo,
        cluster_ratio_hi(points_games, points_y, points_n, points_yy, points_nn, points_yn)
            as points_per_round_hi,
        bust_y as busts,
        bust_y / points_n as bust_rate,
        cluster_rate_lo(bust_games, bust_y, bust_n, bust_yy, bust_nn, bust_yn) as bust_rate_lo,
        cluster_rate_hi(bust_games, bust_y, bust_n, bust_yy, bust_nn, bust_yn) as bust_rate_hi,
        flip7_y as flip7s,
        flip7_y / points_n as flip7_rate,
        cluster_rate_lo(flip7_games, flip7_y, flip7_n, flip7_yy, flip7_nn, flip7_yn) as flip7_rate_lo,
        cluster_rate_hi(flip7_games, flip7_y, flip7_n, flip7_yy, flip7_nn, flip7_yn) as flip7_rate_hi
    from figures
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
