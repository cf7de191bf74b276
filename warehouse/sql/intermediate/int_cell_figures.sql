-- The cell key once: one row per cell (run, variant, ruleset, field size, line-up, and the
-- pipeline's cell number) and group (grouping, policy, key) of the headline groupings, with
-- each figure's six sums of the statistics contract side by side as `<figure>_games`,
-- `<figure>_y`, `<figure>_n`, `<figure>_yy`, `<figure>_nn` and `<figure>_yn` (null where the
-- group has no such figure), and its 95% intervals clustered by game, computed once: as a rate
-- clipped to [0, 1] (`<figure>_rate_lo`, `_rate_hi`), as a ratio y / n, not clipped
-- (`<figure>_ratio_lo`, `_ratio_hi`, and the half-width `_ratio_half`), and as wins over
-- expected wins at 1 / players a seat (`<figure>_index_lo`, `_index_hi`; what `win` means).
-- The marts that show a cell's figures read this and join nothing: win_rates,
-- points_per_round, round_rates, seat_effects, dealer_positions, cell_results.
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
        any_value(yn) as yn,
        any_value(cluster_rate_lo(games, y, n, yy, nn, yn)) as rate_lo,
        any_value(cluster_rate_hi(games, y, n, yy, nn, yn)) as rate_hi,
        any_value(cluster_ratio_lo(games, y, n, yy, nn, yn)) as ratio_lo,
        any_value(cluster_ratio_hi(games, y, n, yy, nn, yn)) as ratio_hi,
        any_value(cluster_ratio_half(games, y, n, yy, nn, yn)) as ratio_half,
        any_value(
            cluster_index_lo(
                games, y, n, n / players, yy, nn / (players * players), yn / players
            )
        ) as index_lo,
        any_value(
            cluster_index_hi(
                games, y, n, n / players, yy, nn / (players * players), yn / players
            )
        ) as index_hi
    group by run, variant, ruleset, players, lineup, cell, grouping, policy, key
)

select * from final
