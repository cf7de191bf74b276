-- One row per group and figure of a committed shard: the additive sums of the statistics
-- contract over the shard's games (pipeline/rollups.py states the groupings and figures).
-- `games` is G, the clusters (games) that add a term; y, n, yy, nn, yn are the sums of y_g,
-- n_g, y_g^2, n_g^2 and y_g n_g. They add across shards: every headline mart is a sum of these
-- rows, so it costs shards x groups, not games. game_y and game_n list each game's y and n for
-- grouping 'policy', figures 'win' and 'points' (empty elsewhere): only card_counting reads them.
with source as (
    select * from lake_table(rollups_files())
)

select * from typed_rollups('source')
