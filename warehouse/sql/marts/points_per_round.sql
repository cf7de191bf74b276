-- Points per round per cell (run, variant, ruleset, field size, line-up) and policy, pooled:
-- every point the policy's seats scored / every round they played, with its 95% interval
-- clustered by game (y = the points of the policy's seats in a game, n = the rounds they
-- played there; not clipped). `se` is that interval's standard error (half-width / 1.96).
-- From the shards' rollups.
with figures as (
    select * from int_cell_figures
    where grouping = 'policy' and points_n is not null and win_n is not null
),

final as (
    select
        columns(lambda c: is_cell_key(c)),
        policy,
        points_games as games,
        win_n as player_games,
        points_n as rounds,
        points_y as points,
        points_y / points_n as points_per_round,
        points_ratio_half / 1.959963984540054 as se,
        points_ratio_lo as ppr_lo,
        points_ratio_hi as ppr_hi
    from figures
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
