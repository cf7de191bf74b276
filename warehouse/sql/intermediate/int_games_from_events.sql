-- Every game summarised from the event log alone, beside which verify's tests compare it with
-- the compact tables (int_games_from_tables, side by side in int_games_compared):
--   events: how many events the game logged, counted from its stored rows (stg_event_games:
--     the codes, the HITs folded into them and a ROUND_SCORE per seat per round), to compare
--     with the games table's `events` (the files store no sequence numbers to check)
--   event_rows, coded_rounds: the game's stored rows (one, unless a row is repeated) and
--     whether every row's round lengths add up to its codes (false if one does not)
--   rounds, round_starts, round_ends, round_caps, game_ends: the last round and the markers
--     (ROUND_START and GAME_END counted where they name a seat, as they always do)
--   winner, winner_total: the seat GAME_END names and the total it names
--   played_rows, played_fingerprint: how many (round, seat) rows rebuilt from the events are
--     not empty (an empty row: score 0, not busted, no Flip 7, status 0, not the dealer), and
--     the sum of their hashes (round, seat, score, busted, flip7, status, dealt): equal to the
--     rounds table's (int_games_from_tables, its non-empty rows alike) exactly when the two hold
--     the same rows, in any order (but for a 2^-64 chance of a collision). Empty rows are left
--     out on both sides because a seat can have no event in a round: the files leave the round
--     scores to the rounds table, and a round can end before a seat is dealt (a Flip 7 during
--     the deal); its rebuilt row would be empty, and so is its row in the rounds table
--   played_seats, seat_fingerprint: seats with rebuilt rounds whose total is not 0 or whom
--     GAME_END names, and the sum of hashes of (seat, total of its rebuilt scores, whether
--     GAME_END names it), to compare with the games table's (the same seats alike)
-- One read of int_rounds_from_events (seat -1 rows included: the round markers), so that the
-- event groups, a view, are computed once, straight into the per-seat aggregate.
-- Hashes see types (a negative tinyint and bigint hash differently), so scores and totals hash
-- as bigint here and in int_games_from_tables.
with ids as (
    select
        run,
        game,
        any_value(shard) as shard,
        sum(events) as events,
        count(*) as event_rows,
        bool_and(coalesce(list_sum(rounds), 0) = len(codes)) as coded_rounds
    from stg_event_games
    group by run, game
),

seats as (
    -- seat -1: the rounds' events about nobody (ROUND_END, ROUND_CAP), in the same pass
    select
        run,
        game,
        seat,
        sum(score) as total,
        count(*) filter (not empty) as played_rows,
        sum(hash(round, seat, score::bigint, busted, flip7, status, dealt)) filter (not empty)
            as played_fingerprint,
        count(*) filter (dealt) as round_starts,
        count(*) filter (won) as game_ends,
        max(game_end_value) as game_end_value,
        max(round) as last_round,
        count(*) filter (round_end) as round_ends,
        count(*) filter (round_cap) as round_caps
    from (
        select
            *,
            score = 0 and not busted and not flip7 and status = 0 and not dealt as empty
        from int_rounds_from_events
    )
    group by run, game, seat
),

rebuilt as (
    select
        run,
        game,
        sum(played_rows) filter (seat >= 0) as played_rows,
        sum(played_fingerprint) filter (seat >= 0) as played_fingerprint,
        count(*) filter (seat >= 0 and (total <> 0 or game_ends > 0)) as played_seats,
        sum(hash(seat, total::bigint, game_ends > 0))
            filter (seat >= 0 and (total <> 0 or game_ends > 0)) as seat_fingerprint,
        sum(round_starts) filter (seat >= 0) as round_starts,
        sum(game_ends) filter (seat >= 0) as game_ends,
        max(seat) filter (seat >= 0 and game_ends > 0) as winner,
        max(game_end_value) filter (seat >= 0) as winner_total,
        max(last_round) as rounds,
        sum(round_ends) filter (seat < 0) as round_ends,
        sum(round_caps) filter (seat < 0) as round_caps
    from seats
    group by run, game
),

final as (
    select
        i.run,
        i.shard,
        i.game,
        i.events,
        i.event_rows,
        i.coded_rounds,
        r.rounds,
        coalesce(r.round_starts, 0) as round_starts,
        coalesce(r.round_ends, 0) as round_ends,
        coalesce(r.round_caps, 0) as round_caps,
        coalesce(r.game_ends, 0) as game_ends,
        r.winner,
        r.winner_total,
        r.played_rows,
        r.played_fingerprint,
        r.played_seats,
        r.seat_fingerprint
    from ids as i
    left join rebuilt as r on i.run = r.run and i.game = r.game
)

select * from final
