-- Dealer-position effects per cell (run, variant, ruleset, field size, line-up): points per
-- round, bust and Flip 7 rates by turn position in the round (0 acts first after the dealer,
-- players - 1 is the dealer), all policies pooled (policy = '*') and per policy. A seat's
-- position changes from round to round, so each game contributes the rounds played at a
-- position: 95% intervals clustered by game, n = those rounds, y = their points (busts,
-- Flip 7s); rates clipped to [0, 1]. From the shards' rollups (grouping 'position').
with rollups as (
    select * from int_cell_rollups
    where grouping = 'position'
),

sums as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        key as position,
        policy,
        any_value(games) filter (figure = 'points') as games,
        any_value(n) filter (figure = 'points') as rounds,
        any_value(y) filter (figure = 'points') as points,
        any_value(cluster_ratio_lo(games, y, n, yy, nn, yn)) filter (figure = 'points')
            as points_per_round_lo,
        any_value(cluster_ratio_hi(games, y, n, yy, nn, yn)) filter (figure = 'points')
            as points_per_round_hi,
        any_value(y) filter (figure = 'bust') as busts,
        any_value(cluster_rate_lo(games, y, n, yy, nn, yn)) filter (figure = 'bust')
            as bust_rate_lo,
        any_value(cluster_rate_hi(games, y, n, yy, nn, yn)) filter (figure = 'bust')
            as bust_rate_hi,
        any_value(y) filter (figure = 'flip7') as flip7s,
        any_value(cluster_rate_lo(games, y, n, yy, nn, yn)) filter (figure = 'flip7')
            as flip7_rate_lo,
        any_value(cluster_rate_hi(games, y, n, yy, nn, yn)) filter (figure = 'flip7')
            as flip7_rate_hi
    from rollups
    group by run, variant, ruleset, players, lineup, cell, key, policy
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        position,
        policy,
        games,
        rounds,
        points / rounds as points_per_round,
        points_per_round_lo,
        points_per_round_hi,
        busts,
        busts / rounds as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7s,
        flip7s / rounds as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi
    from sums
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
