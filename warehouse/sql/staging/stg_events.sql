-- One row per engine event of a committed shard (see flip7/events.py for what player, card,
-- target and value mean per kind). The file list holds only shards whose games file exists.
-- The files hold a row per round with its events as a list of packed codes (stg_event_rounds;
-- flip7.events.pack: bits 0-4 kind, 5-10 player + 1, 11-16 card + 1, 17-22 target + 1, 23-54
-- value, a signed 32-bit integer) and HITs folded into the event after them; this view unfolds
-- and unpacks them, numbering each event from its round's first seq, so nothing downstream
-- sees the storage.
with rounds as (
    select run, players, shard, game, round, seq, event_codes(codes) as codes
    from stg_event_rounds
),

events as (
    select
        run,
        players,
        shard,
        game,
        round,
        seq + generate_subscripts(codes, 1) - 1 as seq,
        unnest(codes) as code
    from rounds
),

final as (
    select
        run,
        players,
        shard,
        game,
        round,
        cast(seq as integer) as seq,
        cast(code & 31 as tinyint) as kind,
        cast(((code >> 5) & 63) - 1 as tinyint) as player,
        cast(((code >> 11) & 63) - 1 as tinyint) as card,
        cast(((code >> 17) & 63) - 1 as tinyint) as target,
        cast(code >> 23 as integer) as value
    from events
)

select * from final
