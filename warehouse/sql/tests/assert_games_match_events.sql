-- scope: shard
-- only where: games_differ
-- Every row of the compact games table equals the game rebuilt from the event log alone: total
-- (the sum of the seat's rebuilt round scores), rounds, event count, the winner GAME_END names
-- and its total, capped (ROUND_CAP), and rank (1 + seats with a higher total).
-- Row by row only in the games whose summaries differ (int_games_compared.games_differ): where
-- they agree, every row does (the seat fingerprints hold each seat's total and winner flag).
with suspects as (
    select run, game from int_games_compared where games_differ
),

games as (
    select
        *,
        rank() over (partition by run, game order by total desc) as rank_from_totals
    from stg_games
    semi join suspects using (run, game)
),

seat_totals as (
    select run, game, seat, sum(score) as total
    from int_rounds_from_events
    semi join suspects using (run, game)
    where seat >= 0
    group by run, game, seat
),

game_events as (
    select * from int_games_from_events
    semi join suspects using (run, game)
),

compared as (
    select
        coalesce(g.run, e.run) as run,
        coalesce(g.shard, e.shard) as shard,
        coalesce(g.game, e.game) as game,
        g.seat,
        case
            when g.game is null then 'game in the events but not in the games table'
            when e.game is null then 'game in the games table but not in the events'
            when s.total is null and (g.total <> 0 or g.winner)
                then format('seat {} has no rounds in the events', g.seat)
            when g.total <> s.total then format('seat {}: total {} in games, {} rebuilt from events', g.seat, g.total, s.total)
            when g.rounds <> e.rounds then format('{} rounds in games, {} in events', g.rounds, e.rounds)
            when g.events <> e.events then format('{} events in games, {} in the event log', g.events, e.events)
            when g.winner <> (g.seat = e.winner) then format('seat {}: winner {} in games, GAME_END names seat {}', g.seat, g.winner, e.winner)
            when g.winner and g.total <> e.winner_total then format('winner total {} in games, GAME_END says {}', g.total, e.winner_total)
            when g.capped <> (e.round_caps > 0) then format('capped {} in games, {} ROUND_CAP events', g.capped, e.round_caps)
            when g.rank <> g.rank_from_totals then format('seat {}: rank {} in games, {} from totals', g.seat, g.rank, g.rank_from_totals)
        end as problem
    from games as g
    full outer join game_events as e on g.run = e.run and g.game = e.game
    left join seat_totals as s on g.run = s.run and g.game = s.game and g.seat = s.seat
)

select * from compared where problem is not null
