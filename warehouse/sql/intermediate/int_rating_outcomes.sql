-- Each game's final ranking as Plackett-Luce choice stages (warehouse/ratings.py), games with
-- the same outcome counted once: one row per (run, ruleset, field size, outcome), where an
-- outcome is the table's policies with their ranks. A stage is a seat chosen from the seats
-- still in: those ranked the same or lower (rank >= its rank, so tied seats are each chosen
-- from a set that holds all of them: Breslow's ties); a seat alone at the bottom is no choice.
-- The likelihood depends only on these counts, and each game's score (for the variance
-- clustered by game) only on its outcome, so the fit never reads a game twice.
with games as (
    select
        run,
        ruleset,
        variant,
        players,
        shard,
        game,
        policy,
        rank
    from stg_games
),

stages as (
    select
        *,
        list_sort(list(policy) over (
            partition by run, shard, game order by rank desc
            range between unbounded preceding and current row
        )) as remaining
    from games
),

per_game as (
    select
        run,
        ruleset,
        any_value(variant) as variant,
        players,
        list(struct_pack(rank, policy) order by rank, policy) as outcome,
        list(policy order by policy) as seats,
        list(struct_pack(remaining, chosen := policy) order by rank, policy)
            filter (where len(remaining) >= 2) as stages
    from stages
    group by run, ruleset, players, shard, game
),

final as (
    select
        run,
        ruleset,
        any_value(variant) as variant,
        players,
        outcome,
        count(*) as games,
        any_value(seats) as seats,
        any_value(stages) as stages
    from per_game
    group by run, ruleset, players, outcome
)

select * from final
