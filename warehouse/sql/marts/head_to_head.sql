-- Head to head per run and field size: for every two different policies that sat at the same
-- table, how often each finished ahead of the other (by rank; equal totals tie). A meeting is
-- one pair of seats in one game. `ahead_share` = ahead / (ahead + behind), with its 95% Wilson
-- interval.
with results as (
    select run, players, game, seat, policy, rank from fct_game_results
),

meetings as (
    select
        a.run,
        a.players,
        a.policy,
        b.policy as opponent,
        count(*) as meetings,
        count(*) filter (a.rank < b.rank) as ahead,
        count(*) filter (a.rank > b.rank) as behind,
        count(*) filter (a.rank = b.rank) as tied
    from results as a
    inner join results as b
        on a.run = b.run and a.game = b.game and a.seat <> b.seat and a.policy <> b.policy
    group by a.run, a.players, a.policy, b.policy
),

final as (
    select
        *,
        ahead / nullif(ahead + behind, 0) as ahead_share,
        wilson_lo(ahead, ahead + behind) as ahead_share_lo,
        wilson_hi(ahead, ahead + behind) as ahead_share_hi
    from meetings
)

select * from final
