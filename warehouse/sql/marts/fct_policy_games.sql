-- materialized: view
-- (One row per policy per game: as big as the games table, so never copied into memory; the
-- marts that read it are small.)
-- One row per policy per game: the cluster of every per-cell win rate and points per round.
-- seats: seats the policy filled in the game; wins: of those, the winner (0 or 1); points: the
-- final totals of its seats added; rounds: rounds its seats played (seats x the game's
-- rounds); rank_sum: its seats' finishing ranks added. Win rate = sum(wins) / sum(seats) and
-- points per round = sum(points) / sum(rounds) over a cell's games, each with the interval
-- clustered by game (y, n) = (wins, seats) and (points, rounds).
with games as (
    select * from stg_games
),

cells as (
    select columns(lambda c: is_cell_column(c)) from int_cells
),

per_game as (
    select
        run,
        any_value(cell) as cell,
        any_value(pair) as pair,
        any_value(cell_game) as cell_game,
        game,
        policy,
        cast(count(*) as integer) as seats,
        cast(count(*) filter (winner) as integer) as wins,
        cast(sum(total) as bigint) as points,
        cast(sum(rounds) as bigint) as rounds,
        cast(sum(rank) as bigint) as rank_sum
    from games
    group by run, game, policy
),

final as (
    select c.*, p.* exclude (run, cell)
    from per_game as p
    inner join cells as c on p.run = c.run and p.cell = c.cell
)

select * from final
