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
        columns(lambda c: is_cell_key(c)),
        policy,
        games,
        rounds,
        bust_y as busts,
        bust_y / rounds as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7_y as flip7s,
        flip7_y / rounds as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi,
        stay_y as stays,
        stay_y / rounds as stay_rate,
        stay_rate_lo,
        stay_rate_hi,
        freeze_y as freezes,
        freeze_y / rounds as freeze_rate,
        freeze_rate_lo,
        freeze_rate_hi
    from figures
    where rounds is not null
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
