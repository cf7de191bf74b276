-- materialized: view
-- One row per player per game: the compact games table (result, rank, line-up, seed) plus the
-- game's points per round for that seat (total / rounds) and the win rate an average seat
-- expects at this table size (1 / players).
with games as (
    select * from stg_games
),

final as (
    select
        -- the games table as staging holds it, its rules named first
        run,
        ruleset,
        variant,
        * exclude (run, ruleset, variant),
        total / rounds as points_per_round,
        1.0 / players as expected_win_rate
    from games
)

select * from final
