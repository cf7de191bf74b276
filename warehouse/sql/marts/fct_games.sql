-- materialized: view
-- One row per game: line-up, seed, length and winner (what a replay picker lists). Every game
-- has exactly one winner row in the games table (assert_games_complete), so this is that row,
-- renamed: no aggregation, so a run's first games come back without reading all of them.
with games as (
    select * from stg_games
),

final as (
    select
        run,
        ruleset,
        variant,
        players,
        shard,
        game,
        cell,
        cell_game,
        pair,
        lineup,
        seed,
        first_dealer,
        rounds,
        capped,
        events,
        cast(seat as integer) as winner_seat,
        policy as winner_policy,
        total as winner_total
    from games
    where winner
)

select * from final
