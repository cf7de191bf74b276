-- The one pass over the event log that verify makes: events grouped per player per round
-- (player -1 holds the round's events about nobody: ROUND_END, RESHUFFLE, ROUND_CAP), with
-- what rebuilding a round needs and what checking a game needs (counts, sequence bounds and sum).
--   kinds: bit k set if an event of kind k occurred (kinds as in macros/labels.sql)
--   cards: bit c set if card c was drawn (DRAW); 0-13 numbers, 14-18 +2..+10, 19 x2
--   plus_half: sum of (card - 13) over +N modifiers drawn (+2 -> 1, ..., +10 -> 5)
--   bonus, round_score, game_end_value: the values of FLIP7, ROUND_SCORE and GAME_END
-- Few, plain aggregates on purpose: verify runs this over every event, and each FILTERed
-- aggregate costs about 6% of the pass (measured; see docs/warehouse.md). `card & 31` keeps the
-- shift defined on rows the FILTER drops (card -1), which DuckDB still evaluates.
with events as (
    select run, players, shard, game, round, seq, kind, player, card, value
    from stg_events
),

final as (
    select
        run,
        players,
        shard,
        game,
        round,
        player,
        count(*) as events,
        min(seq) as first_seq,
        max(seq) as last_seq,
        sum(seq) as seq_sum,
        bit_or(1::integer << kind) as kinds,
        bit_or(1::bigint << (card & 31)) filter (kind = 1) as cards,
        sum(card - 13) filter (kind = 1 and card between 14 and 18) as plus_half,
        max(value) filter (kind = 13) as bonus,
        max(value) filter (kind = 15) as round_score,
        max(value) filter (kind = 18) as game_end_value
    from events
    group by run, players, shard, game, round, player
)

select * from final
