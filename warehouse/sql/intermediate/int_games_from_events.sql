-- Every game summarised from the event log alone, beside which verify's tests compare it with
-- the compact tables (int_games_from_tables, side by side in int_games_compared):
--   events, first_seq, last_seq, seq_sum: how many events and whether their sequence numbers
--     run 0..n-1 (count, bounds and sum; a stored round row of n events starting at seq s
--     holds s .. s + n - 1)
--   rounds, round_starts, round_ends, round_caps, game_ends: the last round and the markers
--     (ROUND_START and GAME_END counted where they name a seat, as they always do)
--   winner, winner_total: the seat GAME_END names and the total it names
--   round_rows, round_fingerprint: how many (round, seat) rows rebuilt from the events, and the
--     sum of their hashes (round, seat, score, busted, flip7, status, dealt): equal to the
--     rounds table's fingerprint exactly when the two hold the same rows, in any order (but for
--     a 2^-64 chance of a collision)
--   unlogged_rounds: rebuilt rows whose ROUND_SCORE event is missing or says another score
--   seat_rows, seat_fingerprint: seats with rebuilt rounds, and the sum of hashes of (seat,
--     total of its rebuilt scores, whether GAME_END names it), to compare with the games table
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
        min(seq) as first_seq,
        max(seq + events - 1) as last_seq,
        sum(events * seq + events * (events - 1) // 2) as seq_sum
    from stg_event_rounds
    group by run, game
),

seats as (
    -- seat -1: the rounds' events about nobody (ROUND_END, ROUND_CAP), in the same pass
    select
        run,
        game,
        seat,
        sum(score) as total,
        count(*) as round_rows,
        sum(hash(round, seat, score::bigint, busted, flip7, status, dealt)) as round_fingerprint,
        count(*) filter (not coalesce(has_round_score and logged_score = score, false))
            as unlogged_rounds,
        count(*) filter (dealt) as round_starts,
        count(*) filter (won) as game_ends,
        max(game_end_value) as game_end_value,
        max(round) as last_round,
        count(*) filter (round_end) as round_ends,
        count(*) filter (round_cap) as round_caps
    from int_rounds_from_events
    group by run, game, seat
),

rebuilt as (
    select
        run,
        game,
        sum(round_rows) filter (seat >= 0) as round_rows,
        sum(round_fingerprint) filter (seat >= 0) as round_fingerprint,
        sum(unlogged_rounds) filter (seat >= 0) as unlogged_rounds,
        count(*) filter (seat >= 0) as seat_rows,
        sum(hash(seat, total::bigint, game_ends > 0)) filter (seat >= 0) as seat_fingerprint,
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
        i.first_seq,
        i.last_seq,
        i.seq_sum,
        r.rounds,
        coalesce(r.round_starts, 0) as round_starts,
        coalesce(r.round_ends, 0) as round_ends,
        coalesce(r.round_caps, 0) as round_caps,
        coalesce(r.game_ends, 0) as game_ends,
        r.winner,
        r.winner_total,
        r.round_rows,
        r.round_fingerprint,
        r.unlogged_rounds,
        r.seat_rows,
        r.seat_fingerprint
    from ids as i
    left join rebuilt as r on i.run = r.run and i.game = r.game
)

select * from final
