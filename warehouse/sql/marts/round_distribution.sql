-- The distribution of round scores per cell (run, variant, ruleset, field size, line-up) and
-- policy: how many rounds scored each value, its share and the cumulative share (busts are the
-- rounds at 0, with others).
with rounds as (
    select * from fct_round_results
),

cells as (
    select * from int_shard_cells
),

by_shard as (
    select run, shard, policy, score, count(*) as rounds
    from rounds
    group by run, shard, policy, score
),

counts as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        r.policy,
        r.score,
        sum(r.rounds) as rounds
    from by_shard as r
    inner join cells as c on r.run = c.run and r.shard = c.shard
    group by c.run, c.variant, c.ruleset, c.players, c.lineup, r.policy, r.score
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        policy,
        cast(score as integer) as score,
        cast(rounds as bigint) as rounds,
        rounds / sum(rounds) over cell as share,
        sum(rounds) over (cell order by score) / sum(rounds) over cell as cumulative_share
    from counts
    window cell as (partition by run, variant, ruleset, players, lineup, policy)
)

select * from final
