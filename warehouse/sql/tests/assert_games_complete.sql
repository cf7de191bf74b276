-- scope: shard
-- Every game is whole: one games row per seat 0..n-1 and exactly one winner; rounds x seats
-- rounds rows for rounds 1..rounds (with assert_rounds_match_events, which finds any (round,
-- seat) without its row, that is one row each) whose totals are running sums; one GAME_END; a
-- ROUND_START and a ROUND_END per round; one stored events row whose round lengths add up to
-- its codes. (The files store no sequence numbers: an event's is implicit in its place. That
-- the stored events count what the games table's `events` says is assert_games_match_events'.)
with tables as (
    select * from int_games_from_tables where seat_rows is not null
),

events as (
    select * from int_games_from_events
),

checked as (
    select
        t.run,
        t.shard,
        t.game,
        case
            when t.seat_rows <> t.players or t.seats <> t.players or t.first_seat <> 0 or t.last_seat <> t.players - 1
                then format('{} games rows for seats {}..{} at a {}-player table', t.seat_rows, t.first_seat, t.last_seat, t.players)
            when t.winners <> 1 then format('{} winners', t.winners)
            when t.round_rows is null then 'no rows in the rounds table'
            when t.round_rows <> t.min_rounds * t.players
                or t.first_round <> 1 or t.last_round <> t.min_rounds
                then format('{} rounds rows for rounds {}..{} ({} rounds x {} seats expected)', t.round_rows, t.first_round, t.last_round, t.min_rounds, t.players)
            -- total is each seat's running sum of scores: summed over rounds r = 1..R, the score
            -- of round r counts R + 1 - r times (a linear check, no sort needed).
            when t.total_sum <> (t.min_rounds + 1) * t.score_sum - t.score_round_sum
                then format('the rounds table''s running totals do not add up to its scores')
            when e.game is null then 'no events'
            when e.game_ends <> 1 then format('{} GAME_END events', e.game_ends)
            when e.round_starts <> e.rounds or e.round_ends <> e.rounds
                then format('{} ROUND_START and {} ROUND_END events for {} rounds', e.round_starts, e.round_ends, e.rounds)
            when e.event_rows <> 1 then format('{} events rows, not one', e.event_rows)
            when not e.coded_rounds then 'the events row''s round lengths do not add up to its codes'
        end as problem
    from tables as t
    left join events as e on t.run = e.run and t.game = e.game
)

select * from checked where problem is not null
