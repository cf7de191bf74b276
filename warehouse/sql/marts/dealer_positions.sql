-- materialized: view
-- (No dashboard page reads it: computed when a query asks, not at every dashboard start.)
-- Dealer-position effects per cell (run, variant, ruleset, field size, line-up): points per
-- round, bust and Flip 7 rates by turn position in the round (0 acts first after the dealer,
-- players - 1 is the dealer), all policies pooled (policy = '*') and per policy. A seat's
-- position changes from round to round, so each game contributes the rounds played at a
-- position: 95% intervals clustered by game, n = those rounds, y = their points (busts,
-- Flip 7s); rates clipped to [0, 1].
with rounds as (
    select * from fct_round_results
),

cells as (
    select * from int_shard_cells
),

by_game as (
    select
        run,
        shard,
        game,
        position,
        coalesce(policy, '*') as policy,
        count(*) as rounds,
        sum(score) as points,
        count(*) filter (busted) as busts,
        count(*) filter (flip7) as flip7s
    from rounds
    group by grouping sets (
        (run, shard, game, position),
        (run, shard, game, position, policy)
    )
),

per_game as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        g.game,
        g.position,
        g.policy,
        g.rounds,
        g.points,
        g.busts,
        g.flip7s
    from by_game as g
    inner join cells as c on g.run = c.run and g.shard = c.shard
),

sums as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        position,
        policy,
        count(*) as games,
        cast(sum(rounds) as bigint) as rounds,
        cast(sum(points) as bigint) as points,
        clustered_lo(points, rounds) as points_per_round_lo,
        clustered_hi(points, rounds) as points_per_round_hi,
        cast(sum(busts) as bigint) as busts,
        clustered_rate_lo(busts, rounds) as bust_rate_lo,
        clustered_rate_hi(busts, rounds) as bust_rate_hi,
        cast(sum(flip7s) as bigint) as flip7s,
        clustered_rate_lo(flip7s, rounds) as flip7_rate_lo,
        clustered_rate_hi(flip7s, rounds) as flip7_rate_hi
    from per_game
    group by run, variant, ruleset, players, lineup, position, policy
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
