-- materialized: view
-- One row per game: line-up, seed, length and winner (what a replay picker lists). Every game
-- has exactly one winner row in the games table (assert_games_complete), so this is that row,
-- renamed: no aggregation, so a run's first games come back without reading all of them.
with winners as (
    select * from stg_games
    where winner
),

final as (
    select
        -- the winner's row of the games table, its rules named first, its seat's own columns
        -- renamed as the winner's
        run,
        ruleset,
        variant,
        * exclude (run, ruleset, variant, seat, policy, total, rank, winner),
        cast(seat as integer) as winner_seat,
        policy as winner_policy,
        total as winner_total
    from winners
)

select * from final
