-- materialized: view
-- One row per game: line-up, seed, length and winner (what a replay picker lists).
with games as (
    select * from stg_games
),

final as (
    select
        run,
        any_value(ruleset) as ruleset,
        any_value(variant) as variant,
        players,
        any_value(shard) as shard,
        game,
        any_value(cell) as cell,
        any_value(cell_game) as cell_game,
        any_value(pair) as pair,
        any_value(lineup) as lineup,
        any_value(seed) as seed,
        any_value(first_dealer) as first_dealer,
        any_value(rounds) as rounds,
        any_value(capped) as capped,
        any_value(events) as events,
        cast(max(seat) filter (winner) as integer) as winner_seat,
        max(policy) filter (winner) as winner_policy,
        max(total) filter (winner) as winner_total
    from games
    group by run, players, game
)

select * from final
