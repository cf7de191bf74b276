-- scope: shard
-- only where: rounds_differ
-- Every row of the compact rounds table equals the round rebuilt from the event log alone
-- (score, bust, Flip 7, status, dealer), and every rebuilt round has its row. (The running
-- totals are checked in assert_games_complete; the events files store no ROUND_SCORE: the
-- rounds table's score is the logged one, checked here against the cards.)
-- Row by row only in the games whose summaries differ (int_games_compared.rounds_differ):
-- equal row counts and fingerprints (sums of row hashes) mean equal rows.
with suspects as (
    select run, shard, game from int_games_compared where rounds_differ
),

rounds as (
    select * from stg_rounds
    semi join suspects using (run, game)
),

rebuilt as (
    select * from int_rounds_from_events
    semi join suspects using (run, game)
    where seat >= 0
),

compared as (
    select
        coalesce(r.run, e.run) as run,
        coalesce(r.shard, s.shard) as shard,
        coalesce(r.game, e.game) as game,
        coalesce(r.round, e.round) as round,
        coalesce(r.seat, e.seat) as seat,
        case
            when r.game is null then 'round in the events but not in the rounds table'
            when e.game is null and not (
                r.score = 0 and not r.busted and not r.flip7 and r.status = 0 and r.dealer <> r.seat
            ) then 'round in the rounds table but not in the events'
            when r.score <> e.score then format('score {} in rounds, {} rebuilt from events', r.score, e.score)
            when r.busted <> e.busted then format('busted {} in rounds, {} in events', r.busted, e.busted)
            when r.flip7 <> e.flip7 then format('flip7 {} in rounds, {} in events', r.flip7, e.flip7)
            when r.status <> e.status then format('status {} in rounds, {} from events', r.status, e.status)
            when (r.dealer = r.seat) <> e.dealt then format('dealer {} in rounds disagrees with ROUND_START', r.dealer)
        end as problem
    from rounds as r
    full outer join rebuilt as e
        on r.run = e.run and r.game = e.game and r.round = e.round and r.seat = e.seat
    left join suspects as s on coalesce(r.run, e.run) = s.run and coalesce(r.game, e.game) = s.game
)

select * from compared where problem is not null
