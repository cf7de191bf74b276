-- scope: shard
-- Every game is whole: one games row per seat 0..n-1 and exactly one winner; rounds x seats
-- rounds rows for rounds 1..rounds (with assert_rounds_match_events, which finds any (round,
-- seat) without its row, that is one row each) whose totals are running sums; one GAME_END; a ROUND_START and a ROUND_END per round; event
-- sequence numbers 0..events-1 (count, bounds and sum agree; a repeat that
-- leaves all three unchanged needs two coordinated edits).
with games as (
    select
        run,
        shard,
        game,
        any_value(players) as players,
        count(*) as seat_rows,
        count(distinct seat) as seats,
        min(seat) as min_seat,
        max(seat) as max_seat,
        count(*) filter (winner) as winners,
        any_value(rounds) as rounds
    from stg_games
    group by run, shard, game
),

rounds as (
    select
        run,
        game,
        count(*) as round_rows,
        min(round) as first_round,
        max(round) as last_round,
        sum(total) as total_sum,
        sum(score) as score_sum,
        sum(score * round) as score_round_sum
    from stg_rounds
    group by run, game
),

events as (
    select * from int_games_from_events
),

checked as (
    select
        g.run,
        g.shard,
        g.game,
        case
            when g.seat_rows <> g.players or g.seats <> g.players or g.min_seat <> 0 or g.max_seat <> g.players - 1
                then format('{} games rows for seats {}..{} at a {}-player table', g.seat_rows, g.min_seat, g.max_seat, g.players)
            when g.winners <> 1 then format('{} winners', g.winners)
            when r.game is null then 'no rows in the rounds table'
            when r.round_rows <> g.rounds * g.players
                or r.first_round <> 1 or r.last_round <> g.rounds
                then format('{} rounds rows for rounds {}..{} ({} rounds x {} seats expected)', r.round_rows, r.first_round, r.last_round, g.rounds, g.players)
            -- total is each seat's running sum of scores: summed over rounds r = 1..R, the score
            -- of round r counts R + 1 - r times (a linear check, no sort needed).
            when r.total_sum <> (g.rounds + 1) * r.score_sum - r.score_round_sum
                then format('the rounds table''s running totals do not add up to its scores')
            when e.game is null then 'no events'
            when e.game_ends <> 1 then format('{} GAME_END events', e.game_ends)
            when e.round_starts <> e.rounds or e.round_ends <> e.rounds
                then format('{} ROUND_START and {} ROUND_END events for {} rounds', e.round_starts, e.round_ends, e.rounds)
            when e.first_seq <> 0 or e.last_seq <> e.events - 1
                or e.seq_sum <> e.events * (e.events - 1) // 2
                then format('event seq {}..{} over {} events is not 0..n-1 once each', e.first_seq, e.last_seq, e.events)
        end as problem
    from games as g
    left join rounds as r on g.run = r.run and g.game = r.game
    left join events as e on g.run = e.run and g.game = e.game
)

select * from checked where problem is not null
