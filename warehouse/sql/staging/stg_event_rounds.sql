-- One row per round of a game as the events files store it (pipeline/schema.py): the round's
-- events in order as a list of packed codes, seq the sequence number of its first event, and
-- how many events the row holds (a HIT folded into the next event is one element for two
-- events: elements at or above 2^55). stg_events unfolds these into one row per event; verify
-- reads them directly (it needs no HIT, and counting per round costs less than per event).
with source as (
    select * from lake_table(events_files())
),

final as (
    select
        run,
        players,
        shard,
        game,
        round,
        seq,
        len(codes) + len(list_filter(codes, lambda c: c >= 36028797018963968)) as events,
        codes
    from source
)

select * from final
