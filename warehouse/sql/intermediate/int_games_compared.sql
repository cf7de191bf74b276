-- Every game's summary from the compact tables (int_games_from_tables) compared with its
-- summary from the event log (int_games_from_events): two verdicts the data tests start from.
--   rounds_differ: the rounds table's rows of the game and the rows rebuilt from its events
--     differ (row count or fingerprint: the rebuilt scores are compared here, the events hold
--     no ROUND_SCORE)
--   games_differ: a games row of the game may disagree with the events: seats' totals and
--     winner flags (fingerprints), rounds, events or capped repeated unevenly or differing,
--     the winner's total, or a rank that does not follow the totals
--   policies_differ: the rounds table's labels of the game may disagree with the games table's
--     (its fingerprint of (seat, policy) is not rounds x the games rows' one)
-- A game on one side only differs both ways. Where a verdict is false, every row of the game
-- agrees (see the tests that read it), so the tests compare rows only where it is true.
with tables as (
    select * from int_games_from_tables
),

events as (
    select * from int_games_from_events
),

final as (
    select
        run,
        coalesce(t.shard, e.shard) as shard,
        game,
        not coalesce(
            t.played_rows = e.played_rows
            and t.played_fingerprint = e.played_fingerprint,
            false
        ) as rounds_differ,
        not coalesce(
            t.played_seats = e.played_seats
            and t.seat_fingerprint = e.seat_fingerprint
            and t.winner_total = e.winner_total
            and t.min_rounds = e.rounds and t.max_rounds = e.rounds
            and t.min_events = e.events and t.max_events = e.events
            and t.capped_rows = (case when e.round_caps > 0 then t.seat_rows else 0 end)
            and t.rank_errors = 0,
            false
        ) as games_differ,
        coalesce(t.round_policy_fingerprint <> t.policy_fingerprint * t.min_rounds, false)
            as policies_differ
    from tables as t
    -- a full join's run and game: the side's that has the game
    full outer join events as e using (run, game)
)

select * from final
