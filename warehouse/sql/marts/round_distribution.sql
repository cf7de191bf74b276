-- The distribution of round scores per run, field size and policy: how many rounds scored
-- each value, its share and the cumulative share (busts are the rounds at 0, with others).
with rounds as (
    select * from fct_round_results
),

counts as (
    select
        run,
        players,
        policy,
        score,
        count(*) as rounds
    from rounds
    group by run, players, policy, score
),

final as (
    select
        run,
        players,
        policy,
        cast(score as integer) as score,
        rounds,
        rounds / sum(rounds) over (partition by run, players, policy) as share,
        sum(rounds) over (partition by run, players, policy order by score)
        / sum(rounds) over (partition by run, players, policy) as cumulative_share
    from counts
)

select * from final
