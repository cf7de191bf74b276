-- The one pass over the event log that rebuilding rounds needs: events grouped per player per
-- round (player -1 holds the round's events about nobody: ROUND_END, RESHUFFLE, ROUND_CAP), with
--   kinds: bit k set if an event of kind k occurred (kinds as in macros/labels.sql)
--   cards: bit c set if an event of the group named card c (0-13 numbers, 14-18 +2..+10, 19 x2;
--          card & 31, so -1 "no card" sets bit 31). In classic games only DRAW, BUST and SC_USED
--          name number cards, and the last two repeat a number the seat drew; action events name
--          action cards (20-22), which score nothing.
--   extra: the points a classic row adds to its numbers: the +N modifiers drawn (+2 .. +10,
--          each as often as drawn) and the bonus the FLIP7 event carries (one sum: a separate
--          aggregate per value costs more than the few FLIP7 events it would keep apart)
--   game_end_value: the value of GAME_END
-- It reads the events as stored (stg_event_games: a row per game, no ROUND_SCORE, whose scores
-- are the rounds table's), each element beside its round (event_elements, macros/lake.sql: no
-- list sliced per round and no window over events). HIT events (a quarter of the log) tell a
-- rebuild nothing and are left out: the HITs folded into elements are not unfolded (the fold
-- bits are masked off) and the few HITs stored on their own are dropped; int_games_from_events counts every event per stored game row, in a pass of its own.
-- Few keys and aggregates, with little to compute per event, on purpose: verify runs this over
-- every event, and each key column or expression evaluated per event costs several percent of
-- the pass (FILTER clauses cost more than CASE; measured, see docs/warehouse.md). Shifts stay
-- below bit 63: DuckDB refuses shifts that overflow.
-- A view: verify's int_games_from_events reads it once, through int_rounds_from_events, so the
-- groups stream into its per-seat aggregate without being copied into a table first (verify
-- makes it a table only in batches with Vengeance games, where int_vengeance_rounds reads it
-- too).
-- materialized: view
with events as (
    select run, game, round, player, kind, card, value
    from event_elements('stg_event_games')
    where kind <> 2
),

grouped as (
    select
        run,
        game,
        round,
        player,
        bit_or((1::bigint << kind) | (1::bigint << ((card & 31) + 24))) as bits,
        sum(
            case
                when kind = 1 and card between 14 and 18 then 2 * card - 26
                when kind = 13 then value
            end
        ) as extra,
        max(case kind when 18 then value end) as game_end_value
    from events
    group by run, game, round, player
),

final as (
    select
        run,
        game,
        round,
        player,
        cast(bits & 16777215 as integer) as kinds,
        bits >> 24 as cards,
        extra,
        game_end_value
    from grouped
)

select * from final
