-- scope: lake
-- Every games row seats the policy its manifest's line-up puts there: the cell exists with this
-- field size, pair and game ids (game = game_offset + cell_game); seat s of the cell's game i
-- plays line-up[(s - i) mod n] when seats rotate, line-up[s] otherwise; the lineup column is
-- that rotated line-up; every seat of a game carries the game's one seed. (The seed itself is
-- bound to the manifest's seed by verify's replay step, which derives it.)
with games as (
    select run, shard, game, seat, players, policy, cell, cell_game, pair, lineup, seed
    from stg_games
),

cells as (
    select c.*, m.rotate
    from stg_manifest_cells as c
    inner join stg_manifests as m on c.run = m.run
),

seeds as (
    select run, game, count(distinct seed) as seeds
    from games
    group by run, game
    having count(distinct seed) > 1
),

expected as (
    select
        g.*,
        c.cell as planned_cell,
        c.players as planned_players,
        c.pair as planned_pair,
        c.game_offset,
        c.rotate,
        string_split(c.lineup, ',') as seats,
        case when c.rotate then g.cell_game % g.players else 0 end as shift
    from games as g
    left join cells as c on g.run = c.run and g.cell = c.cell
),

checked as (
    select
        run,
        shard,
        game,
        seat,
        case
            when planned_cell is null then format('cell {} is not in the manifest', cell)
            when rotate is null then 'the manifest does not say whether seats rotate'
            when players <> planned_players then format('{} players, the manifest''s cell {} seats {}', players, cell, planned_players)
            when pair <> planned_pair then format('pair {}, the manifest''s cell {} has pair {}', pair, cell, planned_pair)
            when game <> game_offset + cell_game then format('game id {} for game {} of cell {}, the manifest gives {}', game, cell_game, cell, game_offset + cell_game)
            when policy <> seats[(((seat - shift) % players) + players) % players + 1]
                then format('seat {} plays {} in the games table, the manifest''s line-up seats {} there', seat, policy, seats[(((seat - shift) % players) + players) % players + 1])
            when lineup <> array_to_string(list_transform(range(players), lambda s: seats[(((s - shift) % players) + players) % players + 1]), ',')
                then format('line-up {} in the games table, the manifest gives {}', lineup, array_to_string(list_transform(range(players), lambda s: seats[(((s - shift) % players) + players) % players + 1]), ','))
        end as problem
    from expected
)

select * from checked where problem is not null
union all
select s.run, any_value(g.shard), s.game, null, format('{} different seeds across its seats', any_value(s.seeds))
from seeds as s
inner join games as g on s.run = g.run and s.game = g.game
group by s.run, s.game
