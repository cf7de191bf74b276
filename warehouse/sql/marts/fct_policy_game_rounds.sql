-- materialized: view
-- (One row per policy per game: as big as the games table, so never copied into memory; the
-- marts that read it are small.)
-- One row per policy per game: how that policy's seats' rounds ended in the game (rounds
-- played, busts, Flip 7s, stays, freezes), with the game's cell. The clusters of the per-round
-- rates: a rate per round is still clustered by game (y = the game's busts of the policy's
-- seats, n = rounds those seats played in it).
with rounds as (
    select * from stg_rounds
),

cells as (
    select columns(lambda c: is_cell_column(c) or c = 'shard') from int_shard_cells
),

per_game as (
    select * from policy_round_ends('rounds')
),

final as (
    select
        c.* exclude (shard),
        p.* exclude (run, players, shard)
    from per_game as p
    inner join cells as c on p.run = c.run and p.shard = c.shard
)

select * from final
