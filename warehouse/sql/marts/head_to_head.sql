-- Head to head per cell (run, variant, ruleset, field size, line-up): for every two different
-- policies that sat at the same table, how often each finished ahead of the other (by rank;
-- equal totals tie). A meeting is one pair of seats in one game. `ahead_share` = ahead /
-- (ahead + behind), with its 95% interval clustered by game (y = the game's meetings won,
-- n = its decided meetings; clipped to [0, 1]; `games` counts the games where they met). From
-- the shards' rollups (grouping 'versus').
with rollups as (
    select * from int_cell_rollups
    where grouping = 'versus'
),

ahead as (
    select * from rollups where figure = 'ahead'
),

meetings as (
    select run, cell, policy, opponent, y as meetings from rollups where figure = 'meetings'
),

final as (
    select
        a.run,
        a.variant,
        a.ruleset,
        a.players,
        a.lineup,
        a.policy,
        a.opponent,
        a.games,
        m.meetings,
        a.y as ahead,
        a.n - a.y as behind,
        m.meetings - a.n as tied,
        a.y / nullif(a.n, 0) as ahead_share,
        cluster_rate_lo(a.games, a.y, a.n, a.yy, a.nn, a.yn) as ahead_share_lo,
        cluster_rate_hi(a.games, a.y, a.n, a.yy, a.nn, a.yn) as ahead_share_hi
    from ahead as a
    inner join meetings as m
        on a.run = m.run and a.cell = m.cell and a.policy = m.policy and a.opponent = m.opponent
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
