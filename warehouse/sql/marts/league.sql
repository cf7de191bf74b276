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
-- and rates are in win_rates, points_per_round and round_rates.
with policy_games as (
    select * from fct_policy_games
),

pooled as (
    select
        run,
        any_value(variant) as variant,
        ruleset,
        policy,
        list(distinct players order by players) as field_sizes,
        list(distinct lineup order by lineup) as lineups,
        count(*) as games,
        cast(sum(seats) as bigint) as player_games,
        cast(sum(wins) as bigint) as wins,
        sum(seats / players) as expected_wins,
        clustered_index(wins, seats, players) as win_index,
        clustered_index_half(wins, seats, players) as half,
        clustered_index_lo(wins, seats, players) as win_index_lo,
        clustered_index_hi(wins, seats, players) as win_index_hi
    from policy_games
    group by run, ruleset, policy
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
    from pooled
)

select * from final
