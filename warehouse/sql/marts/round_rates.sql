-- How rounds end per cell (run, variant, ruleset, field size, line-up) and policy: bust,
-- Flip 7, stay and freeze rates per round played, each with its count and 95% interval
-- clustered by game (y = the game's busts, ... of the policy's seats, n = the rounds they
-- played in it; clipped to [0, 1]). From the shards' rollups.
with rollups as (
    select * from int_cell_rollups
    where grouping = 'policy' and figure in ('bust', 'flip7', 'stay', 'freeze')
),

rates as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        cell,
        policy,
        figure,
        games,
        n as rounds,
        y as count,
        cluster_rate_lo(games, y, n, yy, nn, yn) as lo,
        cluster_rate_hi(games, y, n, yy, nn, yn) as hi
    from rollups
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        policy,
        any_value(games) as games,
        any_value(rounds) as rounds,
        any_value(count) filter (figure = 'bust') as busts,
        any_value(count) filter (figure = 'bust') / any_value(rounds) as bust_rate,
        any_value(lo) filter (figure = 'bust') as bust_rate_lo,
        any_value(hi) filter (figure = 'bust') as bust_rate_hi,
        any_value(count) filter (figure = 'flip7') as flip7s,
        any_value(count) filter (figure = 'flip7') / any_value(rounds) as flip7_rate,
        any_value(lo) filter (figure = 'flip7') as flip7_rate_lo,
        any_value(hi) filter (figure = 'flip7') as flip7_rate_hi,
        any_value(count) filter (figure = 'stay') as stays,
        any_value(count) filter (figure = 'stay') / any_value(rounds) as stay_rate,
        any_value(lo) filter (figure = 'stay') as stay_rate_lo,
        any_value(hi) filter (figure = 'stay') as stay_rate_hi,
        any_value(count) filter (figure = 'freeze') as freezes,
        any_value(count) filter (figure = 'freeze') / any_value(rounds) as freeze_rate,
        any_value(lo) filter (figure = 'freeze') as freeze_rate_lo,
        any_value(hi) filter (figure = 'freeze') as freeze_rate_hi
    from rates
    group by run, variant, ruleset, players, lineup, cell, policy
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
