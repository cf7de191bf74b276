-- materialized: view
-- (Read by the report and the rule-choices page of one run at a time: computed when asked.)
-- How each cell's games went, all seats pooled: per cell (run, variant, ruleset, field size,
-- line-up) the games, rounds per game, points per round, and bust and Flip 7 rates per round
-- played, each with its 95% interval clustered by game: rounds per game y = the game's rounds,
-- n = 1; points per round y = the points of all seats, n = seats x rounds; rates y = the game's
-- busts (Flip 7s) over all seats, n = its seat-rounds (clipped to [0, 1]). The same line-up
-- under several rulesets is how a run shows what a rule choice changes.
with games as (
    select * from stg_games
),

policy_rounds as (
    select * from fct_policy_game_rounds
),

cells as (
    select * from int_cells
),

-- One row per game: its length, its seat-rounds and the points of all its seats (every seat
-- plays every round of its game).
per_game as (
    select
        run,
        game,
        any_value(cell) as cell,
        any_value(rounds) as rounds,
        sum(rounds) as seat_rounds,
        sum(total) as points
    from games
    group by run, game
),

round_ends as (
    select run, game, sum(busts) as busts, sum(flip7s) as flip7s
    from policy_rounds
    group by run, game
),

joined as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        g.game,
        g.rounds,
        g.seat_rounds,
        g.points,
        r.busts,
        r.flip7s
    from per_game as g
    inner join cells as c on g.run = c.run and g.cell = c.cell
    inner join round_ends as r on g.run = r.run and g.game = r.game
),

sums as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        count(*) as games,
        cast(sum(rounds) as bigint) as rounds,
        clustered_lo(rounds, 1) as rounds_per_game_lo,
        clustered_hi(rounds, 1) as rounds_per_game_hi,
        cast(sum(seat_rounds) as bigint) as seat_rounds,
        cast(sum(points) as bigint) as points,
        clustered_lo(points, seat_rounds) as points_per_round_lo,
        clustered_hi(points, seat_rounds) as points_per_round_hi,
        cast(sum(busts) as bigint) as busts,
        clustered_rate_lo(busts, seat_rounds) as bust_rate_lo,
        clustered_rate_hi(busts, seat_rounds) as bust_rate_hi,
        cast(sum(flip7s) as bigint) as flip7s,
        clustered_rate_lo(flip7s, seat_rounds) as flip7_rate_lo,
        clustered_rate_hi(flip7s, seat_rounds) as flip7_rate_hi
    from joined
    group by run, variant, ruleset, players, lineup
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
