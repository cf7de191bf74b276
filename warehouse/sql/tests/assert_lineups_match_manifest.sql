-- scope: lake
-- Every games row seats the policy its manifest's line-up puts there: the cell exists with this
-- field size, pair and game ids (game = game_offset + cell_game); seat s of the cell's game i
-- plays line-up[(s - i) mod n] when seats rotate, line-up[s] otherwise; the lineup column is
-- that rotated line-up; every seat of a game carries the game's one seed. (The seed itself is
-- bound to the manifest's seed by verify's replay step, which derives it.)
-- The expected seatings are computed once per cell, rotation and seat (n x n rows per cell),
-- then each games row is looked up there, rather than rebuilt per row.
with games as (
    select run, shard, game, seat, players, policy, cell, cell_game, pair, lineup, seed
    from stg_games
),

cells as (
    select c.run, c.cell, c.players, c.pair, c.game_offset, m.rotate, string_split(c.lineup, ',') as seats
    from stg_manifest_cells as c
    inner join stg_manifests as m on c.run = m.run
),

shifts as (
    select *, unnest(range(players)) as shift from cells
),

seatings as (
    select
        run,
        cell,
        shift,
        seat,
        seats[((seat - shift) % players + players) % players + 1] as policy,
        array_to_string(list_transform(range(players), lambda s: seats[((s - shift) % players + players) % players + 1]), ',') as lineup
    from (select *, unnest(range(players)) as seat from shifts)
),

checked as (
    select
        g.run,
        g.shard,
        g.game,
        g.seat,
        case
            when c.cell is null then format('cell {} is not in the manifest', g.cell)
            when c.rotate is null then 'the manifest does not say whether seats rotate'
            when g.players <> c.players then format('{} players, the manifest''s cell {} seats {}', g.players, g.cell, c.players)
            when g.pair <> c.pair then format('pair {}, the manifest''s cell {} has pair {}', g.pair, g.cell, c.pair)
            when g.game <> c.game_offset + g.cell_game then format('game id {} for game {} of cell {}, the manifest gives {}', g.game, g.cell_game, g.cell, c.game_offset + g.cell_game)
            when e.policy is null then format('seat {} is not a seat of the manifest''s cell {}', g.seat, g.cell)
            when g.policy <> e.policy then format('seat {} plays {} in the games table, the manifest''s line-up seats {} there', g.seat, g.policy, e.policy)
            when g.lineup <> e.lineup then format('line-up {} in the games table, the manifest gives {}', g.lineup, e.lineup)
        end as problem
    from games as g
    left join cells as c on g.run = c.run and g.cell = c.cell
    left join seatings as e
        on g.run = e.run
        and g.cell = e.cell
        and g.seat = e.seat
        and e.shift = case when c.rotate then g.cell_game % c.players else 0 end
),

-- Straight from stg_games: a CTE read twice is materialized (measured 3x the cost of both).
seeds as (
    select run, any_value(shard) as shard, game, min(seed) as low, max(seed) as high
    from stg_games
    group by run, game
    having min(seed) <> max(seed)
)

select * from checked where problem is not null
union all
select run, shard, game, null, format('seeds {} to {} across its seats, not one', low, high)
from seeds
