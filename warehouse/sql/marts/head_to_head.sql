-- Head to head per cell (run, variant, ruleset, field size, line-up): for every two different
-- policies that sat at the same table, how often each finished ahead of the other (by rank;
-- equal totals tie). A meeting is one pair of seats in one game. `ahead_share` = ahead /
-- (ahead + behind), with its 95% interval clustered by game (y = the game's meetings won,
-- n = its decided meetings; clipped to [0, 1]; `games` counts the games where they met).
with results as (
    select run, cell, game, seat, policy, rank from stg_games
),

cells as (
    select * from int_cells
),

per_game as (
    select
        a.run,
        a.cell,
        a.game,
        a.policy,
        b.policy as opponent,
        count(*) as meetings,
        count(*) filter (a.rank < b.rank) as ahead,
        count(*) filter (a.rank > b.rank) as behind,
        count(*) filter (a.rank = b.rank) as tied
    from results as a
    inner join results as b
        on a.run = b.run and a.game = b.game and a.seat <> b.seat and a.policy <> b.policy
    group by a.run, a.cell, a.game, a.policy, b.policy
),

sums as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        m.policy,
        m.opponent,
        count(*) as games,
        cast(sum(m.meetings) as bigint) as meetings,
        cast(sum(m.ahead) as bigint) as ahead,
        cast(sum(m.behind) as bigint) as behind,
        cast(sum(m.tied) as bigint) as tied,
        clustered_rate_lo(m.ahead, m.ahead + m.behind) as ahead_share_lo,
        clustered_rate_hi(m.ahead, m.ahead + m.behind) as ahead_share_hi
    from per_game as m
    inner join cells as c on m.run = c.run and m.cell = c.cell
    group by c.run, c.variant, c.ruleset, c.players, c.lineup, m.policy, m.opponent
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        policy,
        opponent,
        games,
        meetings,
        ahead,
        behind,
        tied,
        ahead / nullif(ahead + behind, 0) as ahead_share,
        ahead_share_lo,
        ahead_share_hi
    from sums
)

select * from final
