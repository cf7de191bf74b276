-- scope: lake
-- A run whose manifest says complete holds every planned game exactly once: each cell's game
-- ids are game_offset .. game_offset + games - 1, the planned shard and game counts are met, and
-- no (run, game, seat) appears twice in any run. A run whose sequential test (an SPRT, or a
-- league's ranking test) decided is complete at its decision: it holds the recorded shards'
-- games (a prefix of each cell, at least the games the test used) instead of every planned
-- one (docs/sequential.md).
with manifests as (
    select * from stg_manifests
),

decided as (
    select run, decision.games as decision_games
    from stg_manifest_stops
    where test in ('sprt', 'ranking') and decision is not null
),

recorded as (
    select run, cell, sum(games) as games
    from stg_manifest_shards
    group by run, cell
),

cells as (
    select * from stg_manifest_cells
),

games as (
    select run, cell, game, seat from stg_games
),

per_cell as (
    select
        run,
        cell,
        count(distinct game) as games,
        min(game) as first_game,
        max(game) as last_game
    from games
    group by run, cell
),

-- The games whose seats may repeat, found per game rather than per (game, seat) row (a
-- quarter of the groups, measured 2.5x faster): a seat outside 0..31, or a sum of 2^seat with
-- fewer bits set than rows (a sum of powers of two has as many bits set as terms exactly when
-- no power repeats). Only their rows are grouped per seat below.
repeat_suspects as (
    select run, game
    from games
    group by run, game
    having
        count(*) filter (seat not between 0 and 31) > 0
        or bit_count(cast(sum(1::bigint << (case when seat between 0 and 31 then seat else 0 end)) as bigint)) <> count(*)
),

duplicates as (
    select
        run,
        cast(null as integer) as cell,
        format('game {} seat {} appears {} times', game, seat, count(*)) as problem
    from games
    semi join repeat_suspects using (run, game)
    group by run, game, seat
    having count(*) > 1
),

expected as (
    -- the games each cell of a complete run must hold: all planned, or what a decided
    -- sequential test's manifest records
    select
        c.run,
        c.cell,
        c.game_offset,
        case when d.run is null then c.games else coalesce(r.games, 0) end as games
    from cells as c
    inner join manifests as m on c.run = m.run and m.status = 'complete'
    left join decided as d on c.run = d.run
    left join recorded as r on c.run = r.run and c.cell = r.cell
),

cell_problems as (
    select
        c.run,
        c.cell,
        case
            when p.cell is null then format('cell {}: no games committed, {} planned', c.cell, c.games)
            when p.games <> c.games or p.first_game <> c.game_offset or p.last_game <> c.game_offset + c.games - 1
                then format('cell {}: {} games with ids {}..{}, planned {} from {}', c.cell, p.games, p.first_game, p.last_game, c.games, c.game_offset)
        end as problem
    from expected as c
    left join per_cell as p on c.run = p.run and c.cell = p.cell
),

run_problems as (
    select
        m.run,
        cast(null as integer) as cell,
        case
            when d.run is not null and (select sum(games) from recorded as r where r.run = m.run) < d.decision_games
                then format('its sequential test decided after {} games, but only {} are recorded', d.decision_games, (select sum(games) from recorded as r where r.run = m.run))
            when d.run is null and m.planned_shards <> cardinality(m.shards)
                then format('complete, but {} of {} planned shards recorded', cardinality(m.shards), m.planned_shards)
            when m.planned_games <> (select sum(games) from cells as c where c.run = m.run)
                then format('planned_games {} differs from the sum over its cells', m.planned_games)
        end as problem
    from manifests as m
    left join decided as d on m.run = d.run
    where m.status = 'complete'
)

select * from duplicates
union all
select * from cell_problems where problem is not null
union all
select * from run_problems where problem is not null
