-- One row per game as the events files store it (pipeline/schema.py): `codes`, the game's
-- events in order as a list of packed codes without its ROUND_SCOREs (the rounds table's scores
-- are theirs), a HIT folded into the event after it (an element at or above 2^55 stands for two
-- events); `rounds`, how many elements of `codes` each round has, rounds in order; and how many
-- events the row stands for (its elements, the HITs folded into them and a ROUND_SCORE per seat
-- per round: the games table's `events`). stg_events unfolds these into one row per event;
-- verify reads them directly (it needs no HIT, no ROUND_SCORE and no sequence number).
with source as (
    select * from stored_table(events_files())
),

final as (
    select
        columns(lambda c: is_game_key(c)),
        len(codes) + len(list_filter(codes, lambda c: c >= 36028797018963968))
            + len(rounds) * players as events,
        rounds,
        codes
    from source
)

select * from final
