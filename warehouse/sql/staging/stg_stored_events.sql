-- Every event the events files store, one row each in order, numbered by seq as in stg_events
-- (0.. per game): HITs unfolded and packed codes unpacked into kind, player, card, target,
-- value, but without the ROUND_SCOREs, which the files leave to the rounds table. stg_events
-- adds those; this reads the events files alone (a scan over every event costs about half
-- of stg_events'). A stored event's seq is its place among the game's stored events (from 0)
-- plus the ROUND_SCOREs logged before it (event_seq).
with stored as (
    select
        columns(lambda c: is_game_key(c)),
        generate_subscripts(events, 1) - 1 as j,
        unnest(events) as event
    from (
        select columns(lambda c: is_game_key(c)), event_pairs(rounds, codes) as events
        from stg_event_games
    )
),

unpacked as (
    select
        columns(lambda c: is_game_key(c)),
        event[1] as round,
        j,
        code_kind(event[2]) as kind,
        code_player(event[2]) as player,
        code_card(event[2]) as card,
        code_target(event[2]) as target,
        code_value(event[2]) as value
    from stored
),

numbered as (
    select
        columns(lambda c: is_round_key(c)),
        cast(event_seq(j, round, players, kind, player, value) as integer) as seq,
        kind,
        player,
        card,
        target,
        value
    from unpacked
)

select * from numbered
