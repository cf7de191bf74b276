-- A league table per run and ruleset: every policy ranked by its adjusted win index, a NAMED
-- AGGREGATE over every cell (field size and line-up) of the run the policy played in under that
-- ruleset (a run that compares rule choices gets one league per ruleset, never a blend):
--
--     adjusted win index = sum of its wins / sum of its expected wins,
--
-- where each seat at an n-player table expects 1/n of a win (1.0 = an average seat, 1.2 = 20%
-- more wins than a fair share). It is a ratio over games, so its 95% interval is clustered by
-- game like every other figure (y = the policy's wins in a game, n = its seats there / n; not
-- clipped). `field_sizes` and `lineups` list the cells it pools; per-cell win rates, points
-- and rates are in win_rates, points_per_round and round_rates. From the shards' rollups: each
-- cell's sums of n, n^2 and y*n divided by n, n^2 and n, then added over the cells.
with wins as (
    select * from int_cell_rollups
    where grouping = 'policy' and figure = 'win'
),

pooled as (
    select
        run,
        any_value(variant) as variant,
        ruleset,
        policy,
        list(distinct players order by players) as field_sizes,
        list(distinct lineup order by lineup) as lineups,
        cast(sum(games) as bigint) as games,
        cast(sum(n) as bigint) as player_games,
        cast(sum(y) as bigint) as wins,
        sum(n / players) as expected_wins,
        sum(yy) as ww,
        sum(nn / (players * players)) as ee,
        sum(yn / players) as we
    from wins
    group by run, ruleset, policy
),

indexed as (
    select
        *,
        wins / expected_wins as win_index,
        cluster_index_half(games, wins, player_games, expected_wins, ww, ee, we) as half,
        cluster_index_lo(games, wins, player_games, expected_wins, ww, ee, we) as win_index_lo,
        cluster_index_hi(games, wins, player_games, expected_wins, ww, ee, we) as win_index_hi
    from pooled
),

final as (
    select
        run,
        variant,
        ruleset,
        cast(row_number() over (partition by run, ruleset order by win_index desc, policy) as integer)
            as place,
        policy,
        field_sizes,
        lineups,
        games,
        player_games,
        wins,
        expected_wins,
        win_index,
        half / 1.959963984540054 as win_index_se,
        win_index_lo,
        win_index_hi
    from indexed
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
