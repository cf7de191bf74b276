-- Dealer-position effects per cell (run, variant, ruleset, field size, line-up): points per
-- round, bust and Flip 7 rates by turn position in the round (0 acts first after the dealer,
-- players - 1 is the dealer), all policies pooled (policy = '*') and per policy. A seat's
-- position changes from round to round, so each game contributes the rounds played at a
-- position: 95% intervals clustered by game, n = those rounds, y = their points (busts,
-- Flip 7s); rates clipped to [0, 1]. From the shards' rollups (grouping 'position').
with figures as (
    select * from int_cell_figures
    where grouping = 'position'
),

final as (
    select
        columns(lambda c: is_cell_key(c)),
        key as position,
        policy,
        points_games as games,
        points_n as rounds,
        points_y / points_n as points_per_round,
        points_ratio_lo as points_per_round_lo,
        points_ratio_hi as points_per_round_hi,
        bust_y as busts,
        bust_y / points_n as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7_y as flip7s,
        flip7_y / points_n as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi
    from figures
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
