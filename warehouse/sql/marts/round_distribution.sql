-- The distribution of round scores per cell (run, variant, ruleset, field size, line-up) and
-- policy: how many rounds scored each value, its share and the cumulative share (busts are the
-- rounds at 0, with others). From the shards' rollups (grouping 'score').
with counts as (
    select * from int_cell_rollups
    where grouping = 'score'
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        policy,
        key as score,
        y as rounds,
        y / sum(y) over cell as share,
        sum(y) over (cell order by key) / sum(y) over cell as cumulative_share
    from counts
    window cell as (partition by run, variant, ruleset, players, lineup, policy)
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
