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
        columns(lambda c: is_cell_key(c)),
        rounds_games as games,
        rounds_y as rounds,
        rounds_y / rounds_games as rounds_per_game,
        rounds_ratio_lo as rounds_per_game_lo,
        rounds_ratio_hi as rounds_per_game_hi,
        points_n as seat_rounds,
        points_y as points,
        points_y / points_n as points_per_round,
        points_ratio_lo as points_per_round_lo,
        points_ratio_hi as points_per_round_hi,
        bust_y as busts,
        bust_y / points_n as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7_y as flip7s,
        flip7_y / points_n as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi
    from figures
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
