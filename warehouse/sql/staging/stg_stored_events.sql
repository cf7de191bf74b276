-- Every event the events files store, one row each in order, numbered by seq as in stg_events
-- (0.. per game): HITs unfolded and packed codes unpacked into kind, player, card, target,
-- value, but without the ROUND_SCOREs, which the files leave to the rounds table. stg_events
-- adds those; this reads the events files alone (a scan over every event costs about half
-- of stg_events'). A stored event's seq is its place among the game's stored events (from 0)
-- plus the ROUND_SCOREs logged before it (event_seq).
with stored as (
    select
        run,
        players,
        shard,
        game,
        generate_subscripts(events, 1) - 1 as j,
        unnest(events) as event
    from (select run, players, shard, game, event_pairs(rounds, codes) as events from stg_event_games)
),

unpacked as (
    select
        run,
        players,
        shard,
        game,
        event[1] as round,
        j,
        cast(event[2] & 31 as tinyint) as kind,
        cast(((event[2] >> 5) & 63) - 1 as tinyint) as player,
        cast(((event[2] >> 11) & 63) - 1 as tinyint) as card,
        cast(((event[2] >> 17) & 63) - 1 as tinyint) as target,
        cast(event[2] >> 23 as integer) as value
    from stored
),

numbered as (
    select
        run,
        players,
        shard,
        game,
        round,
        cast(event_seq(j, round, players, kind, player, value) as integer) as seq,
        kind,
        player,
        card,
        target,
        value
    from unpacked
)

select * from numbered
