-- One row per engine event of a committed shard (see flip7/events.py for what player, card,
-- target and value mean per kind), every event the engine logged, numbered by seq (0.. per
-- game). The file list holds only shards whose games file exists.
-- The files hold a row per game (stg_event_games): its events as a list of packed codes
-- (flip7.events.pack: bits 0-4 kind, 5-10 player + 1, 11-16 card + 1, 17-22 target + 1, 23-54
-- value, a signed 32-bit integer) with HITs folded into the event after them, how many codes
-- each round has, and no ROUND_SCORE (the rounds table's scores). This view unfolds and unpacks
-- them and numbers them (stg_stored_events) and puts the ROUND_SCOREs back, so nothing
-- downstream sees the storage. Seat p's ROUND_SCORE at an n-seat table comes n - p
-- events before ROUND_END, less the Second Chances set aside at round end by later seats (each
-- logged just before its seat's ROUND_SCORE).
-- stg_stored_events is named twice, not read through a CTE: DuckDB materializes a CTE read
-- twice, which held every unfolded event in memory for a query over all of them and kept a
-- filter on shard from reaching the files (measured: 45 s instead of 0.5 s for three shards of
-- a 1M-game lake); a view named twice is two scans, each filtered.
with round_ends as (
    -- per round: ROUND_END's seq and the seats that set a Second Chance aside (a bit each);
    -- grouped by every id a query may filter on, so that the filter reaches the files
    select
        columns(lambda c: is_round_key(c)),
        max(seq) filter (kind = 16) as end_seq,
        coalesce(
            bit_or(case when kind = 10 and player between 0 and 62 then 1::bigint << player end),
            0
        ) as set_aside
    from stg_stored_events
    where kind = 16 or (kind = 10 and value = 1)
    group by all
),

round_scores as (
    select
        r.run,
        r.players,
        r.shard,
        r.game,
        r.round,
        cast(e.end_seq - (r.players - r.seat) - bit_count(e.set_aside >> (r.seat + 1)) as integer)
            as seq,
        cast(15 as tinyint) as kind,
        r.seat as player,
        cast(-1 as tinyint) as card,
        cast(-1 as tinyint) as target,
        cast(r.score as integer) as value
    from stg_rounds as r
    inner join round_ends as e
        on r.run = e.run and r.players = e.players and r.shard = e.shard and r.game = e.game
        and r.round = e.round
),

final as (
    select * from stg_stored_events
    union all
    select * from round_scores
)

select * from final
