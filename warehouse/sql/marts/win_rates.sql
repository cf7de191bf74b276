-- Win rate per cell (run, variant, ruleset, field size, line-up) and policy: wins / seats the
-- policy filled, with its 95% interval clustered by game (y = the policy's wins in a game,
-- n = its seats there; clipped to [0, 1]), and the field-size adjusted win index: wins /
-- expected wins, where a seat at an n-player table expects 1/n (1.0 = an average seat), with
-- its own interval, not clipped (the `cluster_index_*` macros, as in league). `games`: games
-- the policy sat in (the clusters); `player_games`: seats played (a policy in two seats of one
-- game counts twice). Also the mean finishing rank (1 = winner). From the shards' rollups.
with rollups as (
    select * from int_cell_rollups
    where grouping = 'policy'
),

wins as (
    select * from rollups where figure = 'win'
),

ranks as (
    select run, cell, policy, y as rank_sum from rollups where figure = 'rank'
),

final as (
    select
        w.run,
        w.variant,
        w.ruleset,
        w.players,
        w.lineup,
        w.policy,
        w.games,
        w.n as player_games,
        w.y as wins,
        w.y / w.n as win_rate,
        cluster_rate_lo(w.games, w.y, w.n, w.yy, w.nn, w.yn) as win_rate_lo,
        cluster_rate_hi(w.games, w.y, w.n, w.yy, w.nn, w.yn) as win_rate_hi,
        1.0 / w.players as expected_rate,
        w.n / w.players as expected_wins,
        w.y / (w.n / w.players) as win_index,
        cluster_index_lo(
            w.games, w.y, w.n, w.n / w.players, w.yy,
            w.nn / (w.players * w.players), w.yn / w.players
        ) as win_index_lo,
        cluster_index_hi(
            w.games, w.y, w.n, w.n / w.players, w.yy,
            w.nn / (w.players * w.players), w.yn / w.players
        ) as win_index_hi,
        r.rank_sum / w.n as mean_rank
    from wins as w
    inner join ranks as r on w.run = r.run and w.cell = r.cell and w.policy = r.policy
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
