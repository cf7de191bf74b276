-- The cell key once: one row per cell (run, variant, ruleset, field size, line-up, and the
-- pipeline's cell number) and group (grouping, policy, key) of the headline groupings, with
-- each figure's six sums of the statistics contract side by side as `<figure>_games`,
-- `<figure>_y`, `<figure>_n`, `<figure>_yy`, `<figure>_nn` and `<figure>_yn` (null where the
-- group has no such figure). The marts that show a cell's figures read this and join nothing:
-- win_rates, points_per_round, round_rates, seat_effects, dealer_positions, cell_results.
-- A pivot of int_cell_rollups (a few rows per cell), so it costs what the rollups cost.
with rollups as (
    select * from int_cell_rollups
    where grouping in ('cell', 'policy', 'position', 'seat')
),

final as (
    pivot rollups
    on figure in ('win', 'rank', 'points', 'rounds', 'bust', 'flip7', 'stay', 'freeze')
    using
        any_value(games) as games,
        any_value(y) as y,
        any_value(n) as n,
        any_value(yy) as yy,
        any_value(nn) as nn,
        any_value(yn) as yn
    group by run, variant, ruleset, players, lineup, cell, grouping, policy, key
)

select * from final
