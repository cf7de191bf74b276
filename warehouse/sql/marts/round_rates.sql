-- How rounds end per cell (run, variant, ruleset, field size, line-up) and policy: bust,
-- Flip 7, stay and freeze rates per round played, each with its count and 95% interval
-- clustered by game (y = the game's busts, ... of the policy's seats, n = the rounds they
-- played in it; clipped to [0, 1]). From the shards' rollups.
with figures as (
    select
        *,
        coalesce(bust_games, flip7_games, stay_games, freeze_games) as games,
        coalesce(bust_n, flip7_n, stay_n, freeze_n) as rounds
    from int_cell_figures
    where grouping = 'policy'
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        policy,
        games,
        rounds,
        bust_y as busts,
        bust_y / rounds as bust_rate,
        cluster_rate_lo(bust_games, bust_y, bust_n, bust_yy, bust_nn, bust_yn) as bust_rate_lo,
        cluster_rate_hi(bust_games, bust_y, bust_n, bust_yy, bust_nn, bust_yn) as bust_rate_hi,
        flip7_y as flip7s,
        flip7_y / rounds as flip7_rate,
        cluster_rate_lo(flip7_games, flip7_y, flip7_n, flip7_yy, flip7_nn, flip7_yn) as flip7_rate_lo,
        cluster_rate_hi(flip7_games, flip7_y, flip7_n, flip7_yy, flip7_nn, flip7_yn) as flip7_rate_hi,
        stay_y as stays,
        stay_y / rounds as stay_rate,
        cluster_rate_lo(stay_games, stay_y, stay_n, stay_yy, stay_nn, stay_yn) as stay_rate_lo,
        cluster_rate_hi(stay_games, stay_y, stay_n, stay_yy, stay_nn, stay_yn) as stay_rate_hi,
        freeze_y as freezes,
        freeze_y / rounds as freeze_rate,
        cluster_rate_lo(freeze_games, freeze_y, freeze_n, freeze_yy, freeze_nn, freeze_yn) as freeze_rate_lo,
        cluster_rate_hi(freeze_games, freeze_y, freeze_n, freeze_yy, freeze_nn, freeze_yn) as freeze_rate_hi
    from figures
    where rounds is not null
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
