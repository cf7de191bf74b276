-- Points per round per cell (run, variant, ruleset, field size, line-up) and policy, pooled:
-- every point the policy's seats scored / every round they played, with its 95% interval
-- clustered by game (y = the points of the policy's seats in a game, n = the rounds they
-- played there; not clipped). `se` is that interval's standard error (half-width / 1.96).
-- From the shards' rollups.
with rollups as (
    select * from int_cell_rollups
    where grouping = 'policy'
),

points as (
    select * from rollups where figure = 'points'
),

seats as (
    select run, cell, policy, n as player_games from rollups where figure = 'win'
),

final as (
    select
        p.run,
        p.variant,
        p.ruleset,
        p.players,
        p.lineup,
        p.policy,
        p.games,
        s.player_games,
        p.n as rounds,
        p.y as points,
        p.y / p.n as points_per_round,
        cluster_ratio_half(p.games, p.y, p.n, p.yy, p.nn, p.yn) / 1.959963984540054 as se,
        cluster_ratio_lo(p.games, p.y, p.n, p.yy, p.nn, p.yn) as ppr_lo,
        cluster_ratio_hi(p.games, p.y, p.n, p.yy, p.nn, p.yn) as ppr_hi
    from points as p
    inner join seats as s on p.run = s.run and p.cell = s.cell and p.policy = s.policy
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
