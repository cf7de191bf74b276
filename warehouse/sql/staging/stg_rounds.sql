-- One row per player per round of a committed shard (the compact table most marts read).
-- status at round end: 0 active (a Flip 7 ended the round), 1 stayed, 2 frozen, 3 busted.
with source as (
    select * from stored_table(rounds_files())
),

final as (
    select
        run,
        players,
        shard,
        game,
        round,
        seat,
        cast(policy as varchar) as policy,
        dealer,
        score,
        total,
        busted,
        flip7,
        status
    from source
)

select * from final
