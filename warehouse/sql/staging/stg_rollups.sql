-- One row per group and figure of a committed shard: the additive sums of the statistics
-- contract over the shard's games (pipeline/rollups.py states the groupings and figures).
-- `games` is G, the clusters (games) that add a term; y, n, yy, nn, yn are the sums of y_g,
-- n_g, y_g^2, n_g^2 and y_g n_g. They add across shards: every headline mart is a sum of these
-- rows, so it costs shards x groups, not games. game_y and game_n list each game's y and n for
-- grouping 'policy', figures 'win' and 'points' (empty elsewhere): only card_counting reads them.
with source as (
    select * from lake_table(rollups_files())
),

final as (
    select
        run,
        players,
        shard,
        cell,
        cast(variant as varchar) as variant,
        cast(ruleset as varchar) as ruleset,
        cast(seating as varchar) as seating,
        first_game,
        cast(grouping as varchar) as grouping,
        cast(figure as varchar) as figure,
        cast(policy as varchar) as policy,
        cast(opponent as varchar) as opponent,
        cast(key as integer) as key,
        games,
        y,
        n,
        yy,
        nn,
        yn,
        game_y,
        game_n
    from source
)

select * from final
