-- stg_rollups without the per-game lists (game_y, game_n): one row per group and figure of a
-- committed shard with its six sums, what int_cell_sums adds up in its one pass over the
-- rollups (a read-only warehouse streams these rows file by file: warehouse/rollups.py).
with source as (
    select * from rollup_rows(rollups_files())
)

select * from typed_rollups('source')
