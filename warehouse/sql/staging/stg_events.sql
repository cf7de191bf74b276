-- One row per engine event of a committed shard (see flip7/events.py for what player, card,
-- target and value mean per kind). The file list holds only shards whose games file exists.
-- The file packs each event's five fields into one int64 `code` (flip7.events.pack: bits 0-4
-- kind, 5-10 player + 1, 11-16 card + 1, 17-22 target + 1, 23-54 value, a signed 32-bit
-- integer); this view unpacks it, so nothing downstream sees the packing.
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
        cast(code & 31 as tinyint) as kind,
        cast(((code >> 5) & 63) - 1 as tinyint) as player,
        cast(((code >> 11) & 63) - 1 as tinyint) as card,
        cast(((code >> 17) & 63) - 1 as tinyint) as target,
        cast(code >> 23 as integer) as value
    from source
)

select * from final
