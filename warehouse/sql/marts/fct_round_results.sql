-- materialized: view
-- One row per player per round: the compact rounds table plus the seat's turn position
-- (0 acts first after the dealer, players - 1 is the dealer) and the status by name.
with rounds as (
    select * from stg_rounds
),

final as (
    select
        -- the rounds table as staging holds it, the turn position after the dealer's seat
        * exclude (score, total, busted, flip7, status),
        cast((seat - dealer - 1 + 2 * players) % players as integer) as position,
        score,
        total,
        busted,
        flip7,
        status,
        status_name(status) as status_name
    from rounds
)

select * from final
