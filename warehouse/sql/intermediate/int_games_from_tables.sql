-- Every game summarised from the compact tables (games and rounds), to compare with
-- int_games_from_events (side by side in int_games_compared):
--   vengeance: the games table says the game was played "With a Vengeance"
--   players, seat_rows, seats, first_seat, last_seat: the table's size and the seats named
--     (seats: how many distinct seats 0..62, the most an event can name, are; a bit set per
--     seat, much cheaper than count(distinct), which DuckDB plans as a join)
--   winners, winner, winner_total: rows flagged winner, the (last) winning seat and its total
--   min_rounds, max_rounds, min_events, max_events, capped_rows: what every seat's row should
--     repeat (rounds played, events written, capped)
--   rank_errors: seats whose rank is not 1 + the seats with a higher total
--   played_seats, seat_fingerprint: seats whose total is not 0 or that won, and the sum of
--     their hashes of (seat, total, winner), as in int_games_from_events
--   round_rows, first_round, last_round: the rounds table's rows of the game
--   total_sum, score_sum, score_round_sum: sums that check the running totals (see
--     assert_games_complete)
--   played_rows, played_fingerprint: the rows that are not empty (score 0, not busted, no
--     Flip 7, status 0, not the dealer) and the sum of their hashes of (round, seat, score,
--     busted, flip7, status, dealer = seat), as in int_games_from_events (which says why)
--   policy_fingerprint, round_policy_fingerprint: sums of hashes of (seat, policy) over the
--     games rows and over the rounds rows (equal up to the factor rounds when every rounds row
--     names the policy the games table seats there; see assert_rounds_policies_match_games)
-- A game in one table only still has its row (the other table's columns null). Hashes see
-- types: a negative tinyint and bigint hash differently, so scores and totals hash as bigint
-- on both sides.
with ranked as (
    select
        run,
        players,
        shard,
        game,
        seat,
        total,
        winner,
        rounds,
        events,
        capped,
        variant,
        policy,
        rank <> rank() over (partition by run, game order by total desc) as rank_error
    from stg_games
),

games as (
    select
        run,
        shard,
        game,
        count(*) filter (variant like 'vengeance%') > 0 as vengeance,
        any_value(players) as players,
        count(*) as seat_rows,
        bit_count(bit_or(case when seat between 0 and 62 then 1::bigint << seat end)) as seats,
        min(seat) as first_seat,
        max(seat) as last_seat,
        count(*) filter (winner) as winners,
        max(seat) filter (winner) as winner,
        max(total) filter (winner) as winner_total,
        min(rounds) as min_rounds,
        max(rounds) as max_rounds,
        min(events) as min_events,
        max(events) as max_events,
        count(*) filter (capped) as capped_rows,
        count(*) filter (rank_error) as rank_errors,
        count(*) filter (total <> 0 or winner) as played_seats,
        sum(hash(seat, total::bigint, winner)) filter (total <> 0 or winner) as seat_fingerprint,
        sum(hash(seat, policy)) as policy_fingerprint
    from ranked
    group by run, shard, game
),

rounds as (
    select
        run,
        shard,
        game,
        count(*) as round_rows,
        min(round) as first_round,
        max(round) as last_round,
        sum(total) as total_sum,
        sum(score) as score_sum,
        sum(score * round) as score_round_sum,
        count(*) filter (not empty) as played_rows,
        sum(hash(round, seat, score::bigint, busted, flip7, status, dealer = seat))
            filter (not empty) as played_fingerprint,
        sum(hash(seat, policy)) as round_policy_fingerprint
    from (
        select
            *,
            score = 0 and not busted and not flip7 and status = 0 and dealer <> seat as empty
        from stg_rounds
    )
    group by run, shard, game
),

final as (
    select
        run,
        coalesce(g.shard, r.shard) as shard,
        game,
        g.* exclude (run, shard, game),
        r.round_rows,
        r.first_round,
        r.last_round,
        r.total_sum,
        r.score_sum,
        r.score_round_sum,
        r.played_rows,
        r.played_fingerprint,
        r.round_policy_fingerprint
    from games as g
    -- a full join's run and game: the side's that has the game
    full outer join rounds as r using (run, game)
)

select * from final
